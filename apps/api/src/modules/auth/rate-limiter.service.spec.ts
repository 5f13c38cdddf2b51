import { parseConfig } from '../../config/config';
import type { RedisService } from '../../common/redis.service';
import { RateLimiter } from './rate-limiter.service';

/** An in-memory stand-in for the few Redis commands the limiter uses. */
function fakeRedis(): RedisService {
  const store = new Map<string, number>();
  const client = {
    mget: async (...keys: string[]) => keys.map((k) => (store.has(k) ? String(store.get(k)) : null)),
    multi() {
      const ops: (() => [null, unknown])[] = [];
      const chain = {
        incr: (k: string) => (ops.push(() => (store.set(k, (store.get(k) ?? 0) + 1), [null, store.get(k)])), chain),
        pexpire: () => (ops.push(() => [null, 1]), chain),
        get: (k: string) => (ops.push(() => [null, store.has(k) ? String(store.get(k)) : null]), chain),
        exec: async () => ops.map((op) => op()),
      };
      return chain;
    },
  };
  return { client } as unknown as RedisService;
}

describe('RateLimiter (sliding one-minute window)', () => {
  const config = parseConfig({});
  const minute = 60_000;
  const t0 = 1_000 * minute; // the start of a fixed minute

  it('allows the limit within a minute and refuses the next request, with Retry-After', async () => {
    const limiter = new RateLimiter(fakeRedis(), config);
    const decisions = [];
    for (let i = 0; i < 11; i++) decisions.push(await limiter.hit('k', 10, t0 + 1000 + i));
    expect(decisions.slice(0, 10).every((d) => d.allowed)).toBe(true);
    expect(decisions[10]).toMatchObject({ allowed: false, remaining: 0 });
    expect(decisions[10]!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(decisions[10]!.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('limits a burst that straddles a minute boundary like any other (a fixed window would let twice the limit through)', async () => {
    const limiter = new RateLimiter(fakeRedis(), config);
    for (let i = 0; i < 10; i++) expect((await limiter.hit('k', 10, t0 + minute - 2000 + i)).allowed).toBe(true);
    // 3 s later, in the next fixed minute: the 10 requests of 3 s ago still count
    expect((await limiter.hit('k', 10, t0 + minute + 1000)).allowed).toBe(false);
    expect((await limiter.peek('k', 10, t0 + minute + 1000)).allowed).toBe(false);
  });

  it('forgets requests older than a minute, and keeps keys apart', async () => {
    const limiter = new RateLimiter(fakeRedis(), config);
    for (let i = 0; i < 10; i++) await limiter.hit('k', 10, t0 + 500 + i);
    expect((await limiter.hit('other', 10, t0 + 600)).allowed).toBe(true);
    expect((await limiter.peek('k', 10, t0 + 2 * minute + 1000)).allowed).toBe(true);
    expect((await limiter.hit('k', 10, t0 + 2 * minute + 1000)).allowed).toBe(true);
  });
});
