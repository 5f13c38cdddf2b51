import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (Retry-After). */
  resetSeconds: number;
}

/**
 * Fixed one-minute windows per key in Redis (INCR + PEXPIRE), shared by every API process.
 * Fails open when Redis is unreachable: readiness reports Redis, and refusing all traffic
 * because a counter is missing would be worse.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger('rate-limit');

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The bucket's state without counting this request. */
  async peek(bucket: string, limit = this.config.auth.rateLimitPerMinute, nowMs = Date.now()): Promise<RateDecision> {
    const windowMs = 60_000;
    const window = Math.floor(nowMs / windowMs);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - nowMs) / 1000));
    try {
      const count = Number((await this.redis.client.get(`${this.config.queuePrefix}:ratelimit:${bucket}:${window}`)) ?? 0);
      return { allowed: count < limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
    } catch (e) {
      this.logger.warn(`rate limiter unavailable, allowing: ${String(e)}`);
      return { allowed: true, limit, remaining: limit, resetSeconds };
    }
  }

  async hit(bucket: string, limit = this.config.auth.rateLimitPerMinute, nowMs = Date.now()): Promise<RateDecision> {
    const windowMs = 60_000;
    const window = Math.floor(nowMs / windowMs);
    const key = `${this.config.queuePrefix}:ratelimit:${bucket}:${window}`;
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * windowMs - nowMs) / 1000));
    try {
      const results = await this.redis.client
        .multi()
        .incr(key)
        .pexpire(key, windowMs + 1000)
        .exec();
      const count = Number(results?.[0]?.[1] ?? 0);
      return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
    } catch (e) {
      this.logger.warn(`rate limiter unavailable, allowing: ${String(e)}`);
      return { allowed: true, limit, remaining: limit, resetSeconds };
    }
  }
}
