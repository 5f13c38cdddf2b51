import { randomBytes } from 'node:crypto';

let counter = Math.floor(Math.random() * 36 ** 4);

/**
 * A new row id in the shape of Prisma's `cuid()` (25 characters: `c`, time, a per-process
 * counter and 12 random base-36 characters), for rows written with typed SQL, where Prisma's
 * client-side default does not run. Unique across processes by the random part; roughly
 * time-ordered like cuid.
 */
export function newId(now = Date.now()): string {
  counter = (counter + 1) % 36 ** 4;
  const rand = randomBytes(8).readBigUInt64BE().toString(36).padStart(13, '0').slice(-12);
  return `c${now.toString(36).padStart(8, '0')}${counter.toString(36).padStart(4, '0')}${rand}`;
}
