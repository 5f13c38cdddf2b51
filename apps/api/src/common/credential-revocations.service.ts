import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { RedisService } from './redis.service';

/** A credential that stopped being valid: an API key (and every session made from it) or a session. */
export interface Revocation {
  apiKeyId?: string;
  sessionId?: string;
}

/**
 * Tells every API process at once that a credential was revoked (Redis pub/sub), so that what
 * is already open with it, such as a live event stream, ends now rather than at its next check.
 */
@Injectable()
export class CredentialRevocations implements OnApplicationShutdown {
  private readonly logger = new Logger('revocations');
  private subscriber?: Redis;
  private readonly listeners = new Set<(r: Revocation) => void>();

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get channel(): string {
    return `${this.config.queuePrefix}:credentials:revoked`;
  }

  /** Announces a revocation; a lost message is caught by the streams' periodic re-check. */
  async revoked(r: Revocation): Promise<void> {
    await this.redis.client.publish(this.channel, JSON.stringify(r)).catch((e: unknown) => this.logger.warn(`could not announce a revocation: ${String(e)}`));
  }

  /** Calls `listener` for each revocation announced by any process; returns the unsubscribe. */
  onRevoked(listener: (r: Revocation) => void): () => void {
    this.listeners.add(listener);
    this.ensureSubscribed().catch((e: unknown) => this.logger.warn(`revocation feed: ${String(e)}`));
    return () => this.listeners.delete(listener);
  }

  private async ensureSubscribed(): Promise<void> {
    if (this.subscriber) return;
    const sub = new Redis({ ...this.config.redis, lazyConnect: true, maxRetriesPerRequest: null });
    this.subscriber = sub;
    sub.on('error', (e) => this.logger.warn(`revocation feed: ${e.message}`));
    sub.on('message', (_channel: string, text: string) => {
      let r: Revocation;
      try {
        r = JSON.parse(text) as Revocation;
      } catch {
        return;
      }
      for (const l of this.listeners) l(r);
    });
    await sub.connect();
    await sub.subscribe(this.channel);
  }

  onApplicationShutdown(): void {
    this.listeners.clear();
    this.subscriber?.disconnect();
  }
}
