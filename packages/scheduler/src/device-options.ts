/**
 * Device options: every way one replica can use a node's GPUs (whole GPUs with NVLink locality,
 * a share of one GPU, a free MIG slice), and how many replicas a node could take alone.
 * CPU and memory are the node-resources filter's business.
 */
import { type DeviceOption, type GpuView, type JobView, type NodeView, poolFree } from './views';

const SINGLES: DeviceOption[] = [];
/** Shared, frozen option for "GPU at position i" (options are never mutated). */
function single(i: number): DeviceOption {
  let o = SINGLES[i];
  if (!o) SINGLES[i] = o = Object.freeze({ gpus: Object.freeze([i]) as number[], slice: -1 });
  return o;
}
const NO_DEVICE: DeviceOption[] = Object.freeze([Object.freeze({ gpus: Object.freeze([]) as unknown as number[], slice: -1 })]) as DeviceOption[];

/**
 * Every way one replica of `job` can use this node's GPUs (ignoring CPU/memory), in preference
 * order. `shareOrder` (the profile's): offer a share's GPUs tightest first or by index.
 */
export function deviceOptions(job: JobView, n: NodeView, shareOrder: 'index' | 'tightest'): DeviceOption[] {
  const models = job.models;
  switch (job.kind) {
    case 'none':
      return NO_DEVICE;
    case 'whole': {
      const free: number[] = [];
      for (let i = 0; i < n.gpus.length; i++) {
        const g = n.gpus[i]!;
        if (g.usable && g.mode === 'whole' && !g.allocated && (!models || models.has(g.model))) free.push(i);
      }
      if (free.length < job.gpus) return [];
      return [{ gpus: pickNvlink(n, free, job.gpus), slice: -1 }];
    }
    case 'share': {
      const out: DeviceOption[] = [];
      const gpus = n.gpus;
      if (shareOrder === 'tightest') {
        // one pass per distinct free level, tightest first; ties keep the lowest index
        const fits: number[] = [];
        for (let i = 0; i < gpus.length; i++) {
          const g = gpus[i]!;
          if (g.usable && (!models || models.has(g.model)) && poolFree(g) >= job.milli) fits.push(i);
        }
        if (fits.length > 1) sortSmall(fits, (a, b) => poolFree(gpus[a]!) - poolFree(gpus[b]!) || a - b);
        for (const i of fits) if (!sameAsEarlier(gpus, out, i)) out.push(single(i));
        return out;
      }
      for (let i = 0; i < gpus.length; i++) {
        const g = gpus[i]!;
        if (!g.usable || (models && !models.has(g.model)) || poolFree(g) < job.milli) continue;
        if (!sameAsEarlier(gpus, out, i)) out.push(single(i));
      }
      return out;
    }
    case 'mig': {
      const out: { o: DeviceOption; free: number }[] = [];
      for (let i = 0; i < n.gpus.length; i++) {
        const g = n.gpus[i]!;
        if (!g.usable || g.mode !== 'mig' || (models && !models.has(g.model))) continue;
        let slice = -1;
        let free = 0;
        for (let s = 0; s < g.mig.length; s++) {
          const m = g.mig[s]!;
          if (m.busy) continue;
          free += m.size;
          if (m.profile === job.migProfile && (slice < 0 || m.start < g.mig[slice]!.start)) slice = s;
        }
        if (slice >= 0) out.push({ o: { gpus: [i], slice }, free });
      }
      // tightest GPU first (fewest free memory slots), then index
      sortSmall(out, (a, b) => a.free - b.free || a.o.gpus[0]! - b.o.gpus[0]!);
      return out.map((x) => x.o);
    }
  }
}

/** How many replicas of `job` this node could take on its own. */
export function fitCount(job: JobView, n: NodeView): number {
  let k = Number.POSITIVE_INFINITY;
  if (job.cpu > 0) k = Math.floor(n.cpuFree / job.cpu);
  if (job.mem > 0) k = Math.min(k, Math.floor(n.memFree / job.mem));
  const models = job.models;
  let dev = 0;
  switch (job.kind) {
    case 'none':
      return k === Number.POSITIVE_INFINITY ? 1 << 20 : k;
    case 'whole':
      for (const g of n.gpus) if (g.usable && g.mode === 'whole' && !g.allocated && (!models || models.has(g.model))) dev++;
      dev = Math.floor(dev / job.gpus);
      break;
    case 'share':
      for (const g of n.gpus) if (!models || models.has(g.model)) dev += Math.floor(poolFree(g) / job.milli);
      break;
    case 'mig':
      for (const g of n.gpus) {
        if (!g.usable || g.mode !== 'mig' || (models && !models.has(g.model))) continue;
        for (const s of g.mig) if (!s.busy && s.profile === job.migProfile) dev++;
      }
      break;
  }
  return Math.min(k, dev);
}

/** True when an option already offers a GPU interchangeable with GPU i (same model, domain, free share). */
function sameAsEarlier(gpus: GpuView[], out: DeviceOption[], i: number): boolean {
  const g = gpus[i]!;
  const f = poolFree(g);
  for (const o of out) {
    const h = gpus[o.gpus[0]!]!;
    if (h.model === g.model && h.domain === g.domain && poolFree(h) === f) return true;
  }
  return false;
}

/**
 * Chooses `k` of the free GPUs (positions) keeping NVLink locality: the tightest NVLink domain
 * that holds all k; otherwise the fewest domains, largest first. Lowest indices inside a domain.
 * May return `free` itself when all of it is the choice (callers pass a list of their own).
 */
export function pickNvlink(n: NodeView, free: number[], k: number): number[] {
  // one NVLink domain (or none known): the lowest indices, without grouping
  const d0 = free.length ? n.gpus[free[0]!]!.domain : 0;
  let oneDomain = true;
  for (let j = 1; j < free.length && oneDomain; j++) oneDomain = n.gpus[free[j]!]!.domain === d0;
  if (oneDomain) return free.length === k ? free : free.slice(0, k);
  const byDomain = new Map<number, number[]>();
  for (const i of free) {
    const d = n.gpus[i]!.domain;
    let list = byDomain.get(d);
    if (!list) byDomain.set(d, (list = []));
    list.push(i);
  }
  if (byDomain.size === 1) return free.slice(0, k);
  const domains = [...byDomain.entries()];
  let fit: [number, number[]] | null = null;
  for (const d of domains) if (d[1].length >= k && (!fit || d[1].length < fit[1].length || (d[1].length === fit[1].length && d[0] < fit[0]))) fit = d;
  if (fit) return fit[1].slice(0, k);
  domains.sort((a, b) => b[1].length - a[1].length || a[0] - b[0]);
  const out: number[] = [];
  for (const [, list] of domains) for (const i of list) if (out.length < k) out.push(i);
  return out.sort((a, b) => a - b);
}

/**
 * Stable in-place insertion sort: the lists here hold one entry per GPU of a node (a handful),
 * where Array.prototype.sort's work array costs more than the sort.
 */
function sortSmall<T>(a: T[], cmp: (x: T, y: T) => number): void {
  for (let i = 1; i < a.length; i++) {
    const x = a[i]!;
    let j = i - 1;
    while (j >= 0 && cmp(a[j]!, x) > 0) {
      a[j + 1] = a[j]!;
      j--;
    }
    a[j + 1] = x;
  }
}
