import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A lease lives this long unless renewed: a worker killed while holding one stalls the GPU at most this long. */
export const GPU_LEASE_MS = 15_000;

/** Deletes the lease only if it is still this holder's (another holder's fresh lease survives). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Runs `fn` holding the Redis lease `key` (one holder across every worker process), renewed
 * every third of its life while `fn` runs, released after. Resolves `{ held: false }` at once,
 * without running `fn`, when another holder has it.
 */
export async function withLease<T>(redis: Redis, key: string, fn: () => Promise<T>, ms = GPU_LEASE_MS): Promise<{ held: true; value: T } | { held: false }> {
  const token = randomUUID();
  if ((await redis.set(key, token, 'PX', ms, 'NX')) !== 'OK') return { held: false };
  const renew = setInterval(() => void redis.pexpire(key, ms).catch(() => undefined), Math.max(1, Math.floor(ms / 3)));
  renew.unref();
  try {
    return { held: true, value: await fn() };
  } finally {
    clearInterval(renew);
    await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
  }
}
