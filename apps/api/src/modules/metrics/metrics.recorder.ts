import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';

/** Counters every process may bump; kept in Redis so that /metrics on any api process sees the sum. */
export const WORKER_COUNTERS = ['placements', 'preemptions', 'failovers', 'cold_starts'] as const;
export type WorkerCounter = (typeof WORKER_COUNTERS)[number];

/** Upper bounds (seconds) of the scheduling-cycle latency histogram. */
export const CYCLE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export interface RecordedMetrics {
  counters: Record<WorkerCounter, number>;
  cycle: { buckets: { le: number; count: number }[]; count: number; sum: number };
}

/**
 * Records worker-side facts for Prometheus (placements, preemptions, failovers, cold starts,
 * scheduling-cycle latency) in one Redis hash. Recording never fails the caller.
 */
@Injectable()
export class MetricsRecorder {
  private readonly logger = new Logger('metrics');

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get key() {
    return `${this.config.queuePrefix}:metrics`;
  }

  async inc(counter: WorkerCounter, by = 1): Promise<void> {
    if (by <= 0) return;
    await this.redis.client.hincrby(this.key, counter, by).catch((e: unknown) => this.logger.warn(`metrics: ${String(e)}`));
  }

  async observeCycle(seconds: number): Promise<void> {
    const m = this.redis.client.multi();
    for (const le of CYCLE_BUCKETS) if (seconds <= le) m.hincrby(this.key, `cycle_le_${le}`, 1);
    m.hincrby(this.key, 'cycle_count', 1);
    m.hincrbyfloat(this.key, 'cycle_sum', seconds);
    await m.exec().catch((e: unknown) => this.logger.warn(`metrics: ${String(e)}`));
  }

  /** A scheduling cycle's latency and placements (and preemptions, once the cycle reports them). */
  async recordCycle(r: { ms: number; placed: number; preempted?: number }): Promise<void> {
    await Promise.all([this.observeCycle(r.ms / 1000), this.inc('placements', r.placed), this.inc('preemptions', r.preempted ?? 0)]);
  }

  async read(): Promise<RecordedMetrics> {
    const h = await this.redis.client.hgetall(this.key);
    const n = (k: string) => Number(h[k] ?? 0);
    return {
      counters: Object.fromEntries(WORKER_COUNTERS.map((c) => [c, n(c)])) as Record<WorkerCounter, number>,
      cycle: { buckets: CYCLE_BUCKETS.map((le) => ({ le, count: n(`cycle_le_${le}`) })), count: n('cycle_count'), sum: n('cycle_sum') },
    };
  }
}
