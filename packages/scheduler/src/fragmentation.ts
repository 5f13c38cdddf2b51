/**
 * The fragmentation model (FGD's measure): how much idle GPU capacity a node holds that the
 * expected mix of request shapes cannot use, and how a placement changes it. The scores built
 * on it are in plugins/fragmentation.ts.
 */
import type { MixEntry, ShapeMix } from './shape-mix';
import { type DeviceOption, type JobView, type NodeClass, type NodeView, poolFree } from './views';

interface FragStats {
  version: number;
  idle: number;
  /** per mix entry (or per group when grouped): usable GPU count and their idle milli */
  usable: Int32Array;
  usableIdle: Float64Array;
  frag: number;
}

/**
 * Mix entries that differ only in CPU (same kind, GPU count, share and models) form a group:
 * they see the same usable GPUs, so one pass over the GPUs serves them all, and the CPU test
 * becomes a lookup in the group's cumulative probability by CPU (ascending).
 */
interface FragGroup {
  gpus: number;
  milli: number;
  models: ReadonlySet<string> | null;
  /** CPU thresholds ascending, and the summed probability of the entries with CPU <= cpu[i] */
  cpu: Float64Array;
  cum: Float64Array;
}

/** Probability mass of a group's entries whose CPU fits in `cpuFree` (cpu ascending). */
export function fitMass(cpu: Float64Array, cum: Float64Array, cpuFree: number): number {
  const k = levelOf(cpu, cpuFree);
  return k < 0 ? 0 : cum[k]!;
}

/** Highest k with cpu[k] <= cpuFree in ascending thresholds (-1: below the lowest). */
export function levelOf(cpu: Float64Array, cpuFree: number): number {
  let lo = 0;
  let hi = cpu.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cpu[mid]! <= cpuFree) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * FGD's fragmentation measure of a node under a shape mix: for each shape m with probability
 * p_m, the idle GPU thousandths m cannot use (all of them when m cannot fit the node for CPU,
 * GPU count or model; otherwise those on GPUs with less free share than m needs).
 * Cached per distinct node state and mix version; the change an option makes is computed
 * incrementally from the cached per-shape statistics (O(shapes) per option).
 *
 * `grouped` (Gantry): the same measure, evaluated per group of shapes that differ only in CPU
 * (O(groups x log) per option instead of O(shapes)), so the whole learned mix can be kept
 * (coverage 1: rare small shares included) at a lower cost than the 95% head of the mix.
 */
export class FragmentationModel {
  constructor(
    readonly mix: ShapeMix,
    private readonly key: string,
    /** Also count a shape as unable to fit when the node lacks its (mean) memory. FGD: false. */
    private readonly memory = false,
    private readonly grouped = false,
  ) {}

  private groupsVersion = -1;
  private groups: FragGroup[] = [];
  /** Summed probability of all entries (1 up to rounding). */
  private pSum = 0;

  private syncGroups(): void {
    if (this.groupsVersion === this.mix.version) return;
    const byKey = new Map<string, { g: FragGroup; items: { cpu: number; p: number }[] }>();
    let pSum = 0;
    for (const m of this.mix.entries) {
      pSum += m.p;
      if (m.kind === 'none' || m.kind === 'mig') continue;
      const key = `${m.gpus}|${m.milli}|${m.models ? [...m.models].join(',') : ''}`;
      let b = byKey.get(key);
      if (!b) byKey.set(key, (b = { g: { gpus: m.gpus, milli: m.milli, models: m.models, cpu: new Float64Array(0), cum: new Float64Array(0) }, items: [] }));
      b.items.push({ cpu: m.cpu, p: m.p });
    }
    this.groups = [...byKey.values()].map(({ g, items }) => {
      items.sort((a, b) => a.cpu - b.cpu);
      const cpu: number[] = [];
      const cum: number[] = [];
      let c = 0;
      for (const it of items) {
        c += it.p;
        if (cpu.length && cpu[cpu.length - 1] === it.cpu) cum[cum.length - 1] = c;
        else {
          cpu.push(it.cpu);
          cum.push(c);
        }
      }
      g.cpu = Float64Array.from(cpu);
      g.cum = Float64Array.from(cum);
      return g;
    });
    this.pSum = pSum;
    this.groupsVersion = this.mix.version;
  }

  private stats(cls: NodeClass, n: NodeView): FragStats {
    const cached = cls.scratch.get(this.key) as FragStats | undefined;
    if (cached && cached.version === this.mix.version) return cached;
    if (this.grouped) return this.groupedStats(cls, n, cached);
    const entries = this.mix.entries;
    let idle = 0;
    for (let i = 0; i < n.gpus.length; i++) idle += poolFree(n.gpus[i]!);
    const reuse = cached && cached.usable.length === entries.length;
    const usable = reuse ? cached.usable.fill(0) : new Int32Array(entries.length);
    const usableIdle = reuse ? cached.usableIdle.fill(0) : new Float64Array(entries.length);
    let frag = 0;
    for (let k = 0; k < entries.length; k++) {
      const m = entries[k]!;
      if (m.kind === 'none' || m.kind === 'mig') {
        frag += m.p * idle;
        continue;
      }
      let u = 0;
      let ui = 0;
      for (let i = 0; i < n.gpus.length; i++) {
        const g = n.gpus[i]!;
        const f = poolFree(g);
        if (f > 0 && f >= m.milli && (!m.models || m.models.has(g.model))) {
          u++;
          ui += f;
        }
      }
      usable[k] = u;
      usableIdle[k] = ui;
      frag += m.p * (m.cpu <= n.cpuFree && (!this.memory || m.mem <= n.memFree) && u >= m.gpus ? idle - ui : idle);
    }
    if (reuse) {
      cached.version = this.mix.version;
      cached.idle = idle;
      cached.frag = frag;
      return cached;
    }
    const s: FragStats = { version: this.mix.version, idle, usable, usableIdle, frag };
    cls.scratch.set(this.key, s);
    return s;
  }

  private groupedStats(cls: NodeClass, n: NodeView, cached: FragStats | undefined): FragStats {
    this.syncGroups();
    const groups = this.groups;
    const ng = groups.length;
    let idle = 0;
    for (let i = 0; i < n.gpus.length; i++) idle += poolFree(n.gpus[i]!);
    const reuse = cached !== undefined && cached.usable.length === ng;
    const usable = reuse ? cached.usable.fill(0) : new Int32Array(ng);
    const usableIdle = reuse ? cached.usableIdle.fill(0) : new Float64Array(ng);
    let fit = 0;
    for (let k = 0; k < ng; k++) {
      const m = groups[k]!;
      let u = 0;
      let ui = 0;
      for (let i = 0; i < n.gpus.length; i++) {
        const g = n.gpus[i]!;
        const f = poolFree(g);
        if (f > 0 && f >= m.milli && (!m.models || m.models.has(g.model))) {
          u++;
          ui += f;
        }
      }
      usable[k] = u;
      usableIdle[k] = ui;
      if (u >= m.gpus) fit += fitMass(m.cpu, m.cum, n.cpuFree) * ui;
    }
    const frag = this.pSum * idle - fit;
    if (reuse) {
      cached.version = this.mix.version;
      cached.idle = idle;
      cached.frag = frag;
      return cached;
    }
    const s: FragStats = { version: this.mix.version, idle, usable, usableIdle, frag };
    cls.scratch.set(this.key, s);
    return s;
  }

  /** Idle GPU milli of the node (from the cached statistics). */
  idle(n: NodeView): number {
    return this.stats(n.cls, n).idle;
  }

  /** Fragmentation of the node before and after placing one replica of `job` with `option`. */
  delta(job: JobView, n: NodeView, option: DeviceOption): { before: number; after: number } {
    const c = this.change(job, n, option);
    const before = this.stats(n.cls, n).frag;
    return { before, after: before + c };
  }

  /** after - before, in thousandths of a GPU (no allocation: the hot path). */
  change(job: JobView, n: NodeView, option: DeviceOption): number {
    const st = this.stats(n.cls, n);
    if (job.kind === 'mig') return 0;
    const touched = option.gpus;
    const nt = touched.length;
    let consumed = 0;
    for (let t = 0; t < nt; t++) {
      const f = poolFree(n.gpus[touched[t]!]!);
      const a = job.kind === 'whole' ? 0 : f - job.milli;
      this.bf[t] = f;
      this.af[t] = a;
      consumed += f - a;
    }
    const cpuAfter = n.cpuFree - job.cpu;
    const idleAfter = st.idle - consumed;
    if (this.grouped) {
      if (nt === 0 && job.cpu === 0) return 0;
      this.syncGroups();
      const groups = this.groups;
      let fit = 0;
      for (let k = 0; k < groups.length; k++) {
        const m = groups[k]!;
        let u = st.usable[k]!;
        let ui = st.usableIdle[k]!;
        for (let t = 0; t < nt; t++) {
          if (m.models !== null && !m.models.has(n.gpus[touched[t]!]!.model)) continue;
          const b = this.bf[t]!;
          const a = this.af[t]!;
          if (b > 0 && b >= m.milli) {
            u--;
            ui -= b;
          }
          if (a > 0 && a >= m.milli) {
            u++;
            ui += a;
          }
        }
        if (u >= m.gpus) fit += fitMass(m.cpu, m.cum, cpuAfter) * ui;
      }
      return this.pSum * idleAfter - fit - st.frag;
    }
    const entries: MixEntry[] = this.mix.entries;
    const memAfter = this.memory ? n.memFree - job.mem : Number.POSITIVE_INFINITY;
    let after = 0;
    for (let k = 0; k < entries.length; k++) {
      const m = entries[k]!;
      if (m.kind === 'none' || m.kind === 'mig') {
        after += m.p * idleAfter;
        continue;
      }
      if (m.cpu > cpuAfter || m.mem > memAfter) {
        after += m.p * idleAfter;
        continue;
      }
      let u = st.usable[k]!;
      let ui = st.usableIdle[k]!;
      for (let t = 0; t < nt; t++) {
        if (m.models !== null && !m.models.has(n.gpus[touched[t]!]!.model)) continue;
        const b = this.bf[t]!;
        const a = this.af[t]!;
        if (b > 0 && b >= m.milli) {
          u--;
          ui -= b;
        }
        if (a > 0 && a >= m.milli) {
          u++;
          ui += a;
        }
      }
      after += m.p * (u >= m.gpus ? idleAfter - ui : idleAfter);
    }
    return after - st.frag;
  }
  private readonly bf = new Float64Array(64);
  private readonly af = new Float64Array(64);
}
