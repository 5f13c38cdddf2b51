import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets (tokens, CSRF values, key hashes) in constant time. Both sides are
 * hashed first so that inputs of different lengths compare in the same time too (a length
 * check before timingSafeEqual would tell an attacker the secret's length). Every comparison
 * of a secret goes through here; never `===`.
 */
export function safeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}
