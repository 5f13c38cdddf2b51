import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { RedisService } from './redis.service';

/** What changed: the caches that hold it drop their entries (every API process and worker at once). */
export type ChangeKind = 'api-keys' | 'teams';
const CHANGE_KINDS: readonly ChangeKind[] = ['api-keys', 'teams'];

type Counters = Record<ChangeKind, string>;

/**
 * The change feed of the lookup caches (API keys, teams with their quota bounds): one counter per
 * kind in Redis, shared by every process. A change bumps its counter after it is committed; a
 * cache reads the counter on each use and trusts an entry only when it was loaded under the same
 * value, so a key revoked through one API process is refused by every other one on its very next
 * request (no message to wait for). Redis out of reach: `current` is null and the caches read
 * Postgres, as they did before there were caches.
 *
 * A read fetches every counter at once, and a request may use any read sent after it began
 * (`notBefore`): a change committed and announced before the request began was counted in Redis
 * before such a read arrived there. So a request's later checks (its team after its key) and the
 * requests arriving together share reads instead of sending one each.
 */
@Injectable()
export class ChangeEpoch {
  private readonly logger = new Logger('change-epoch');
  /** The newest read: when it was sent (performance.now()) and the counters it returns (null: Redis could not say). */
  private newest?: { sentAt: number; counters: Promise<Counters | null> };

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private key(kind: ChangeKind): string {
    return `${this.config.queuePrefix}:changes:${kind}`;
  }

  /**
   * The counter of `kind`, or null when Redis cannot say (then nothing cached may be trusted).
   * `notBefore`: performance.now() when the caller's request began; a read sent since then is
   * used instead of a new one. Without it, always a new read.
   */
  async current(kind: ChangeKind, notBefore?: number): Promise<string | null> {
    const newest = this.newest;
    const counters = newest && notBefore !== undefined && newest.sentAt >= notBefore ? newest.counters : this.read();
    return (await counters)?.[kind] ?? null;
  }

  private read(): Promise<Counters | null> {
    const sentAt = performance.now();
    const counters = this.redis.client.mget(...CHANGE_KINDS.map((k) => this.key(k))).then(
      (values) => Object.fromEntries(CHANGE_KINDS.map((k, i) => [k, values[i] ?? '0'])) as Counters,
      () => null,
    );
    this.newest = { sentAt, counters };
    return counters;
  }

  /**
   * Announces a committed change. When Redis is out of reach the change cannot be announced: the
   * caches then stop trusting entries anyway (their reads fail too) and their TTL bounds the rest.
   */
  async changed(kind: ChangeKind): Promise<void> {
    await this.redis.client.incr(this.key(kind)).catch((e: unknown) => this.logger.warn(`could not announce a change of ${kind}: ${String(e)}`));
  }
}

/**
 * A small in-process cache whose entries are valid only under the change counter they were
 * loaded with (see ChangeEpoch), and for `ttlMs` at most (a backstop for rows changed outside the
 * API, such as by a database script). Misses are never cached.
 */
export class EpochCache<V> {
  private readonly entries = new Map<string, { epoch: string; at: number; value: V }>();
  private readonly loading = new Map<string, { epoch: string; value: Promise<V | null | undefined> }>();

  constructor(
    private readonly epochs: ChangeEpoch,
    private readonly kind: ChangeKind,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * The cached value of `key`, or what `load` returns (cached when not null/undefined). Requests
   * that miss while a load of the key under the same counter is in flight share it (a burst of
   * submissions when an entry lapses reads Postgres once, not once per request); a request that
   * read another counter value loads on its own. `notBefore`: see ChangeEpoch.current.
   */
  async get(key: string, load: () => Promise<V | null | undefined>, nowMs = Date.now(), notBefore?: number): Promise<V | null | undefined> {
    const epoch = await this.epochs.current(this.kind, notBefore);
    const hit = this.entries.get(key);
    if (epoch !== null && hit && hit.epoch === epoch && nowMs - hit.at < this.ttlMs) return hit.value;
    if (epoch === null) {
      this.entries.delete(key);
      return load();
    }
    const flight = this.loading.get(key);
    if (flight && flight.epoch === epoch) return flight.value;
    const value = load();
    this.loading.set(key, { epoch, value });
    try {
      return await this.store(key, epoch, value, nowMs);
    } finally {
      if (this.loading.get(key)?.value === value) this.loading.delete(key);
    }
  }

  private async store(key: string, epoch: string, loading: Promise<V | null | undefined>, nowMs: number): Promise<V | null | undefined> {
    // The counter was read before the load: a change committed meanwhile bumps it, and the
    // entry stored now is not trusted by the next request.
    const value = await loading;
    if (value === null || value === undefined) {
      this.entries.delete(key);
      return value;
    }
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { epoch, at: nowMs, value });
    return value;
  }

  /** Drops one entry in this process (its own change, before the counter is bumped). */
  forget(key: string): void {
    this.entries.delete(key);
    this.loading.delete(key);
  }

  /** Updates a cached value in place (e.g. a key's last-used time), keeping its epoch. */
  update(key: string, change: (v: V) => V): void {
    const hit = this.entries.get(key);
    if (hit) hit.value = change(hit.value);
  }
}
