import { isIP } from 'node:net';

/** An address range: the family, the address as a big integer, and the prefix length. */
interface Cidr {
  family: 4 | 6;
  bits: bigint;
  prefix: number;
}

/** An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) as the IPv4 address it is. */
export function plainAddress(ip: string): string {
  return ip.toLowerCase().startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

function toBits(ip: string, family: 4 | 6): bigint {
  if (family === 4) return ip.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
  let text = ip.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = toBits(v4[1]!, 4);
    text = `${text.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** `10.0.0.0/8`, `fd00::/8` or a single address; null when it is neither. */
export function parseCidr(text: string): Cidr | null {
  const [addr, len] = text.split('/') as [string, string | undefined];
  const ip = plainAddress(addr);
  const family = isIP(ip);
  if (family !== 4 && family !== 6) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = len === undefined ? max : Number(len);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (len !== undefined && !/^\d+$/.test(len))) return null;
  return { family, bits: toBits(ip, family), prefix };
}

function inRange(ip: string, range: Cidr): boolean {
  const family = isIP(ip);
  if (family !== range.family) return false;
  const max = family === 4 ? 32 : 128;
  const shift = BigInt(max - range.prefix);
  return toBits(ip, family) >> shift === range.bits >> shift;
}

/**
 * The client's address. The peer of the TCP connection is the client unless it is one of the
 * trusted proxies; then X-Forwarded-For is read from the right, skipping trusted proxies, and
 * the first address that is not one is the client. A malformed entry ends the walk at the last
 * trusted hop (what a client writes into the header is never believed past a trusted proxy).
 */
export function clientAddressFrom(
  peer: string | undefined | null,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly string[],
): string | null {
  if (!peer) return null;
  let client = plainAddress(peer);
  const ranges = trustedProxies.map(parseCidr).filter((r): r is Cidr => r !== null);
  const trusted = (ip: string) => ranges.some((r) => inRange(ip, r));
  if (!trusted(client) || forwardedFor === undefined) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plainAddress(hops[i]!);
    if (isIP(hop) === 0) break;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client;
}
