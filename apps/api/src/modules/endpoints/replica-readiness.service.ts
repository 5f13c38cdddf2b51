import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';

/**
 * Readiness pushed rather than polled: the worker announces (Redis pub/sub) that a replica of an
 * endpoint now serves (its model loaded, or a warm one promoted), and every API process's
 * activator holding requests for that endpoint wakes at once. A lost announcement costs the
 * activator one fallback poll, never the request.
 */
@Injectable()
export class ReplicaReadiness implements OnApplicationShutdown {
  private readonly logger = new Logger('replica-readiness');
  private subscriber?: Redis;
  private subscribed?: Promise<void>;
  private readonly waiters = new Map<string, Set<() => void>>();
  private closed = false;

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get channel(): string {
    return `${this.config.queuePrefix}:endpoints:replica-ready`;
  }

  /** Announces that a replica of `endpointId` serves; a failure is logged (the activators' fallback poll covers it). */
  async announce(endpointId: string): Promise<void> {
    await this.redis.client.publish(this.channel, endpointId).catch((e: unknown) => this.logger.warn(`could not announce a ready replica: ${String(e)}`));
  }

  /**
   * Resolves true at the next announcement for `endpointId` (from any process), false after `ms`.
   * Registered when called: once subscribed (the first call subscribes), an announcement made
   * after this call and before the await is not lost.
   */
  next(endpointId: string, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const set = this.waiters.get(endpointId) ?? new Set<() => void>();
      this.waiters.set(endpointId, set);
      const done = (woken: boolean) => {
        clearTimeout(timer);
        set.delete(wake);
        if (!set.size && this.waiters.get(endpointId) === set) this.waiters.delete(endpointId);
        resolve(woken);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      timer.unref?.();
      set.add(wake);
      // after shutdown: the timeout only (no new connection)
      if (!this.closed) this.ensureSubscribed().catch((e: unknown) => this.logger.warn(`readiness feed: ${String(e)}`));
    });
  }

  /** Resolves once the subscription is in place (the first waiter subscribes). */
  ensureSubscribed(): Promise<void> {
    this.subscribed ??= (async () => {
      const sub = new Redis({ ...this.config.redis, lazyConnect: true, maxRetriesPerRequest: null });
      this.subscriber = sub;
      sub.on('error', (e) => this.logger.warn(`readiness feed: ${e.message}`));
      sub.on('message', (_channel: string, endpointId: string) => {
        for (const wake of [...(this.waiters.get(endpointId) ?? [])]) wake();
      });
      await sub.connect();
      await sub.subscribe(this.channel);
    })().catch((e: unknown) => {
      // the next waiter tries again
      this.subscribed = undefined;
      this.subscriber?.disconnect();
      this.subscriber = undefined;
      throw e;
    });
    return this.subscribed;
  }

  onApplicationShutdown(): void {
    this.closed = true;
    for (const set of this.waiters.values()) for (const wake of [...set]) wake();
    this.waiters.clear();
    this.subscriber?.disconnect();
  }
}
