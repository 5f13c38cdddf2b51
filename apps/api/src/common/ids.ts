import { randomBytes } from 'node:crypto';

let counter = Math.floor(Math.random() * 36 ** 4);

const BASE36 = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Random bytes drawn from the OS a few KiB at a time: one draw per id cost more than the rest of it. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** `n` random base-36 characters (each from one random byte mod 36: ~5.1 bits of the 5.17 possible). */
function randomBase36(n: number): string {
  if (offset + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  let s = '';
  for (let i = 0; i < n; i++) s += BASE36[pool[offset++]! % 36];
  return s;
}

/**
 * A new row id in the shape of Prisma's `cuid()` (25 characters: `c`, time, a per-process
 * counter and 12 random base-36 characters, about 61 bits), for rows written with typed SQL,
 * where Prisma's client-side default does not run. Unique across processes by the random part;
 * roughly time-ordered like cuid.
 */
export function newId(now = Date.now()): string {
  counter = (counter + 1) % 36 ** 4;
  return `c${now.toString(36).padStart(8, '0')}${counter.toString(36).padStart(4, '0')}${randomBase36(12)}`;
}
