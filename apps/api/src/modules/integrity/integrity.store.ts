import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';

/** The last check's outcome, shared by every process (the worker checks, /metrics on any api reads). */
export interface IntegritySummary {
  checkedAt: string;
  ms: number;
  /** Violations by rule (rules without any are absent). */
  byRule: Record<string, number>;
}

@Injectable()
export class IntegrityStore {
  private readonly logger = new Logger('integrity');

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get key() {
    return `${this.config.queuePrefix}:integrity`;
  }

  async save(s: IntegritySummary): Promise<void> {
    await this.redis.client.set(this.key, JSON.stringify(s)).catch((e: unknown) => this.logger.warn(`integrity: ${String(e)}`));
  }

  async last(): Promise<IntegritySummary | undefined> {
    const raw = await this.redis.client.get(this.key).catch(() => null);
    return raw ? (JSON.parse(raw) as IntegritySummary) : undefined;
  }

  /** One checker at a time across workers: true when this process holds the slot for `seconds`. */
  async claim(seconds: number): Promise<boolean> {
    return (await this.redis.client.set(`${this.key}:lock`, String(process.pid), 'EX', Math.max(1, Math.floor(seconds)), 'NX').catch(() => null)) === 'OK';
  }
}

export function summarize(report: { checkedAt: string; violations: { rule: string }[] }, ms: number): IntegritySummary {
  const byRule: Record<string, number> = {};
  for (const v of report.violations) byRule[v.rule] = (byRule[v.rule] ?? 0) + 1;
  return { checkedAt: report.checkedAt, ms, byRule };
}
