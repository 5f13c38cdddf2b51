/**
 * The mix of request shapes the fragmentation model expects ("typical pods" in FGD): learned
 * from the jobs the engine has seen (queue and recent history), never from the future.
 * Refreshed on a geometric schedule (hysteresis: the mix does not move with every job).
 */

/** How a request uses GPUs: not at all, whole GPUs, a share of one GPU, or a MIG slice. */
export type JobKind = 'none' | 'whole' | 'share' | 'mig';

export interface MixShape {
  key: string;
  kind: JobKind;
  cpu: number;
  /** Whole GPUs (kind 'whole'), 1 for share and MIG, 0 for CPU-only. */
  gpus: number;
  /** Per-GPU thousandths: 1000 for whole GPUs, the share otherwise, 0 for CPU-only and MIG. */
  milli: number;
  migProfile: string | null;
  models: ReadonlySet<string> | null;
}

export interface MixEntry extends MixShape {
  /** Probability after renormalisation over the kept shapes. */
  p: number;
  /** Mean memory (MiB) of the jobs seen with this shape. */
  mem: number;
}

export interface ShapeMixOptions {
  /** Keep the most frequent shapes until they cover this fraction of jobs (FGD: 0.95). */
  coverage?: number;
  /** Fixed mix: never refreshed by new observations after `freeze()`. */
  fixed?: boolean;
  /** Refresh when the count grows by `growth` (x), but at least every `refreshStep` jobs. */
  refreshStep?: number;
  growth?: number;
  /** 'count' (FGD: share of jobs) or 'demand' (share of GPU demand; CPU-only shapes count as 0.1 GPU). */
  weighting?: 'count' | 'demand';
  /**
   * Hysteresis: a scheduled refresh publishes the new mix (a new version, which re-scores every
   * node state) only when it moved by at least this total-variation distance from the published
   * one (0: always). `refresh()` called directly always publishes.
   */
  minChange?: number;
}

export class ShapeMix {
  private readonly counts = new Map<string, { count: number; shape: MixShape; mem: number }>();
  private total = 0;
  private refreshedAt = 0;
  private frozen = false;
  entries: MixEntry[] = [];
  version = 0;
  readonly coverage: number;
  readonly refreshStep: number;
  readonly growth: number;
  readonly weighting: 'count' | 'demand';
  readonly minChange: number;

  constructor(options: ShapeMixOptions = {}) {
    this.coverage = options.coverage ?? 0.95;
    this.refreshStep = options.refreshStep ?? 512;
    this.growth = options.growth ?? 1.2;
    this.weighting = options.weighting ?? 'count';
    this.minChange = options.minChange ?? 0;
  }

  get observed(): number {
    return this.total;
  }

  add(shape: MixShape, n = 1, memoryMiB = 0): void {
    if (this.frozen || n <= 0) return;
    const c = this.counts.get(shape.key);
    if (c) {
      c.count += n;
      c.mem += n * memoryMiB;
    } else this.counts.set(shape.key, { count: n, shape, mem: n * memoryMiB });
    this.total += n;
  }

  /** Refreshes the mix when the schedule says so (doubling, then every `refreshStep` jobs). */
  sync(): void {
    if (this.frozen || this.total === this.refreshedAt) return;
    const due = this.refreshedAt === 0 || this.total >= Math.min(this.refreshedAt * this.growth, this.refreshedAt + this.refreshStep);
    if (due) this.refresh(this.minChange);
  }

  /** Recomputes the mix now; publishes it unless it moved less than `minChange` (total variation). */
  refresh(minChange = 0): void {
    const all = [...this.counts.values()].sort((a, b) => b.count - a.count || (a.shape.key < b.shape.key ? -1 : a.shape.key > b.shape.key ? 1 : 0));
    const kept: { count: number; shape: MixShape; mem: number }[] = [];
    let covered = 0;
    for (const c of all) {
      if (covered >= this.coverage * this.total) break;
      kept.push(c);
      covered += c.count;
    }
    let entries: MixEntry[];
    if (this.weighting === 'demand') {
      const w = (c: { count: number; shape: MixShape }) => c.count * Math.max(100, c.shape.kind === 'mig' ? 1000 : c.shape.gpus * c.shape.milli);
      const sum = kept.reduce((a, c) => a + w(c), 0);
      entries = kept.map((c) => ({ ...c.shape, p: w(c) / sum, mem: c.mem / c.count }));
    } else entries = kept.map((c) => ({ ...c.shape, p: c.count / covered, mem: c.mem / c.count }));
    this.refreshedAt = this.total;
    if (minChange > 0 && this.version > 0 && mixDistance(this.entries, entries) < minChange) return;
    this.entries = entries;
    this.version++;
  }

  /** Computes the mix now and stops learning. */
  freeze(): void {
    this.refresh();
    this.frozen = true;
  }
}

/** Total-variation distance between two mixes (shapes matched by key; a missing shape has p = 0). */
export function mixDistance(a: readonly MixEntry[], b: readonly MixEntry[]): number {
  const p = new Map<string, number>();
  for (const e of a) p.set(e.key, e.p);
  let d = 0;
  for (const e of b) {
    d += Math.abs(e.p - (p.get(e.key) ?? 0));
    p.delete(e.key);
  }
  for (const v of p.values()) d += v;
  return d / 2;
}
