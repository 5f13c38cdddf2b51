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
 * One-minute sliding windows per key in Redis, shared by every API process: a counter per
 * fixed minute (INCR + PEXPIRE), and a request counts what the current minute holds plus the
 * previous minute's count weighted by how much of it still lies within the last 60 s. So a burst
 * across a minute boundary is limited like any other (a fixed window would let twice the limit
 * through there). Fails open when Redis is unreachable: readiness reports Redis, and refusing all
 * traffic because a counter is missing would be worse.
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
    const w = slidingWindow(nowMs);
    try {
      const [current, previous] = await this.redis.client.mget(this.key(bucket, w.window), this.key(bucket, w.window - 1));
      return decision(Number(current ?? 0) + Number(previous ?? 0) * w.previousWeight, limit, w, false);
    } catch (e) {
      this.logger.warn(`rate limiter unavailable, allowing: ${String(e)}`);
      return { allowed: true, limit, remaining: limit, resetSeconds: w.resetSeconds };
    }
  }

  async hit(bucket: string, limit = this.config.auth.rateLimitPerMinute, nowMs = Date.now()): Promise<RateDecision> {
    const w = slidingWindow(nowMs);
    const key = this.key(bucket, w.window);
    try {
      const results = await this.redis.client
        .multi()
        .incr(key)
        .pexpire(key, 2 * WINDOW_MS + 1000)
        .get(this.key(bucket, w.window - 1))
        .exec();
      const current = Number(results?.[0]?.[1] ?? 0);
      const previous = Number(results?.[2]?.[1] ?? 0);
      return decision(current + previous * w.previousWeight, limit, w, true);
    } catch (e) {
      this.logger.warn(`rate limiter unavailable, allowing: ${String(e)}`);
      return { allowed: true, limit, remaining: limit, resetSeconds: w.resetSeconds };
    }
  }

  private key(bucket: string, window: number): string {
    return `${this.config.queuePrefix}:ratelimit:${bucket}:${window}`;
  }
}

const WINDOW_MS = 60_000;

interface SlidingWindow {
  window: number;
  /** Share of the previous minute that still lies within the last 60 s. */
  previousWeight: number;
  /** Seconds until the current minute ends (Retry-After: by then at least its count has aged out by half or more). */
  resetSeconds: number;
}

function slidingWindow(nowMs: number): SlidingWindow {
  const window = Math.floor(nowMs / WINDOW_MS);
  const into = nowMs - window * WINDOW_MS;
  return { window, previousWeight: 1 - into / WINDOW_MS, resetSeconds: Math.max(1, Math.ceil((WINDOW_MS - into) / 1000)) };
}

/** `counted`: the estimate includes this request (hit), so it may reach the limit; a peek must stay below it. */
function decision(estimate: number, limit: number, w: SlidingWindow, counted: boolean): RateDecision {
  const used = Math.ceil(estimate - 1e-9);
  return { allowed: counted ? used <= limit : used < limit, limit, remaining: Math.max(0, limit - used), resetSeconds: w.resetSeconds };
}
