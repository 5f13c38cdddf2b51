/**
 * Built-in plugins and profiles.
 *
 * Filters (state-only): node-ready, persona, node-resources (CPU, memory), gpu-model,
 * gpu-capacity (whole GPUs / share / free MIG slice; also lists the device options).
 * Scores: fragmentation (Gantry: FGD's expected-fragmentation change under a learned shape
 * mix), cpu-strand (GPUs a placement leaves without CPU to feed them), fgd (the paper's integer score, for the baseline), best-fit (the published BestFit
 * formula), packing, spread (least allocated, normalised), nvlink.
 * Reserve: team-usage (keeps fair-share usage current within a cycle).
 * Permit: gang (all replicas or none, required topology).
 */
import { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS, migSliceFraction } from '@gantry/contracts';
import type { DeviceOption, Engine, JobView, NodeClass, NodeView } from './engine';
import { poolFree } from './pool';
import {
  type AnyPlugin,
  type CycleState,
  type FilterPlugin,
  type PermitPlugin,
  type PluginFactory,
  type PreFilterPlugin,
  type Profile,
  type ReservePlugin,
  type ScorePlugin,
  Registry,
  SUCCESS,
  unresolvable,
  unschedulable,
} from './framework';
import type { MixEntry, ShapeMix } from './shape-mix';
import { ShapeMix as ShapeMixClass } from './shape-mix';
import type { PendingJob, ReplicaPlacement, ShapeCount, Status } from './types';
import { validateRequest } from './validate-request';

// ------------------------------------------------------------------ filters

const NODE_DOWN = unschedulable('node_unschedulable', 'node cordoned, draining or down');
const NO_CPU = unschedulable('insufficient_cpu', 'not enough free CPU');
const NO_MEM = unschedulable('insufficient_memory', 'not enough free memory');
const MODEL = unschedulable('gpu_model_not_allowed', 'GPU model not allowed');
const NO_GPU = unschedulable('no_healthy_gpu', 'no healthy schedulable GPU');
const NO_WHOLE = unschedulable('insufficient_gpus', 'not enough free whole GPUs');
const NO_SHARE = unschedulable('insufficient_gpu_share', 'not enough free GPU share');
const personaStatus = new Map<string, Status>();

function requestCheck(engine: Engine): PreFilterPlugin {
  const cache = new Map<string, Status>();
  return {
    name: 'request',
    preFilter(state: CycleState, job: PendingJob): Status {
      // the verdict depends only on the request shape, replicas and topology: computed once per shape
      const key = `${state.job.shapeId}|${job.replicas}|${job.topology.level}|${job.topology.required}|${job.request.gpuModels?.join(',') ?? ''}`;
      let s = cache.get(key);
      if (!s) {
        const r = validateRequest({ replicas: job.replicas, request: job.request, topology: job.topology }, engine.inventory);
        s = r.ok ? SUCCESS : unresolvable(r.code, r.message);
        cache.set(key, s);
      }
      return s;
    },
  };
}

const nodeReady: FilterPlugin = {
  name: 'node-ready',
  filter: (_s, _j, n) => (n.schedulable ? SUCCESS : NODE_DOWN),
};

const persona: FilterPlugin = {
  name: 'persona',
  filter(_s, job, n) {
    if (n.persona === job.persona) return SUCCESS;
    const key = `${job.persona}/${n.persona}`;
    let s = personaStatus.get(key);
    if (!s) personaStatus.set(key, (s = unschedulable('persona_mismatch', `node persona is ${n.persona}, job needs ${job.persona}`)));
    return s;
  },
};

const nodeResources: FilterPlugin = {
  name: 'node-resources',
  filter: (_s, job, n) => (n.cpuFree < job.cpu ? NO_CPU : n.memFree < job.mem ? NO_MEM : SUCCESS),
};

const gpuModel: FilterPlugin = {
  name: 'gpu-model',
  filter(_s, job, n) {
    if (job.kind === 'none') return SUCCESS;
    let healthy = false;
    for (const g of n.gpus) {
      if (!g.usable) continue;
      healthy = true;
      if (!job.models || job.models.has(g.model)) return SUCCESS;
    }
    return healthy ? MODEL : NO_GPU;
  },
};

function gpuCapacity(engine: Engine): FilterPlugin {
  const migStatus = new Map<string, Status>();
  return {
    name: 'gpu-capacity',
    filter(state, job, n) {
      const options = engine.deviceOptions(job, n);
      state.options = options;
      if (options.length > 0) return SUCCESS;
      if (job.kind === 'whole') return NO_WHOLE;
      if (job.kind === 'share') return NO_SHARE;
      const p = job.migProfile ?? '';
      let s = migStatus.get(p);
      if (!s) migStatus.set(p, (s = unschedulable('no_free_mig_slice', `no free MIG ${p} slice`)));
      return s;
    },
  };
}

// ------------------------------------------------------------------ fragmentation model

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
  let lo = 0;
  let hi = cpu.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cpu[mid]! <= cpuFree) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? 0 : cum[lo - 1]!;
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
    for (const g of n.gpus) idle += poolFree(g);
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
      for (const g of n.gpus) {
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
    for (const g of n.gpus) idle += poolFree(g);
    const reuse = cached !== undefined && cached.usable.length === ng;
    const usable = reuse ? cached.usable.fill(0) : new Int32Array(ng);
    const usableIdle = reuse ? cached.usableIdle.fill(0) : new Float64Array(ng);
    let fit = 0;
    for (let k = 0; k < ng; k++) {
      const m = groups[k]!;
      let u = 0;
      let ui = 0;
      for (const g of n.gpus) {
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

/**
 * Gantry's fragmentation score: minus the expected fragmentation added, in GPUs, rounded down to
 * args.quantum; minus args.strand x the GPUs the placement strands for lack of CPU (CpuStrandModel).
 */
function fragmentationScore(engine: Engine, args: Record<string, unknown>): ScorePlugin {
  const model = new FragmentationModel(engine.mix, 'fragmentation', args.memory === true, args.memory !== true && args.grouped !== false);
  const quantum = (args.quantum as number | undefined) ?? 0;
  const floor = (args.minQuantum as number | undefined) ?? 0;
  const relative = args.relative === true;
  // CPU stranding folded in (weight args.strand, after the quantum): one plugin call per option
  const strandW = (args.strand as number | undefined) ?? 0;
  const strand = new CpuStrandModel(engine.mix, (args.strandScale as number | undefined) ?? 1);
  return {
    name: 'fragmentation',
    epoch: () => engine.mix.version,
    score(_s, job, n, option) {
      const v = -model.change(job, n, option) / 1000;
      const q = relative ? Math.max(floor, (quantum * job.gpus * job.milli) / 1000) : quantum;
      const f = q > 0 ? Math.floor(v / q) * q : v;
      return strandW > 0 ? f - (strandW * strand.change(job, n, option, model.idle(n))) / 1000 : f;
    },
  };
}

/**
 * The FGD paper's score, faithfully: int(sigmoid((before - after) / 1000) * 100) with a fixed
 * mix of typical shapes (args.shapes: the trace's shape counts, or the engine's learned mix).
 */
function fgdScore(engine: Engine, args: Record<string, unknown>): ScorePlugin {
  let mix: ShapeMix = engine.mix;
  const shapes = args.shapes as ShapeCount[] | undefined;
  if (shapes) {
    mix = new ShapeMixClass({ coverage: (args.coverage as number | undefined) ?? 0.95 });
    for (const s of shapes) mix.add(engine.mixShape(s.request, 'container'), s.count);
    mix.freeze();
  }
  const model = new FragmentationModel(mix, 'fgd');
  return {
    name: 'fgd',
    epoch: () => mix.version,
    score(_s, job, n, option) {
      return Math.trunc(100 / (1 + Math.exp(model.change(job, n, option) / 1000)));
    },
  };
}

/**
 * The published BestFit baseline: int((1 - (0.5 cpuLeft / cpuScale + 0.5 gpuMilliLeft / gpuScale)) * 100),
 * scales default to the largest node's CPU and GPU count in the snapshot.
 */
function bestFitScore(engine: Engine, args: Record<string, unknown>): ScorePlugin {
  let maxCpu = 0;
  let maxGpu = 0;
  for (const n of engine.nodes) {
    maxCpu = Math.max(maxCpu, n.cpuMilli);
    maxGpu = Math.max(maxGpu, n.gpus.length);
  }
  const cpuScale = (args.cpuScale as number | undefined) ?? (maxCpu || 1);
  const gpuScale = (args.gpuScale as number | undefined) ?? (maxGpu * 1000 || 1);
  const integer = args.integer !== false;
  return {
    name: 'best-fit',
    score(_s, job, n, option) {
      let gpuLeft = 0;
      for (const g of n.gpus) gpuLeft += poolFree(g);
      for (const pos of option.gpus) gpuLeft -= job.kind === 'whole' ? poolFree(n.gpus[pos]!) : job.kind === 'share' ? job.milli : 0;
      const cpuLeft = n.cpuFree - job.cpu;
      const v = (1 - (0.5 * cpuLeft) / cpuScale - (0.5 * gpuLeft) / gpuScale) * 100;
      return integer ? Math.trunc(v) : v;
    },
  };
}

/**
 * CPU stranding: with the mix's CPU per GPU thousandth c (expected CPU demand / expected GPU
 * demand, CPU-only shapes included), a node's idle GPU milli beyond what its free CPU can feed
 * (cpuFree / c) is expected to stay idle. `change` is the stranded GPU milli a placement adds.
 */
export class CpuStrandModel {
  private version = -1;
  private ratio = 0;
  constructor(
    readonly mix: ShapeMix,
    /** Multiplies the CPU per GPU thousandth (1: the mix's own ratio). */
    private readonly scale = 1,
  ) {}

  /** CPU milli the learned mix asks per GPU thousandth (0 when it holds no GPU shape). */
  cpuPerGpuMilli(): number {
    if (this.version !== this.mix.version) {
      let cpu = 0;
      let gpu = 0;
      for (const m of this.mix.entries) {
        cpu += m.p * m.cpu;
        if (m.kind === 'whole' || m.kind === 'share') gpu += m.p * m.gpus * m.milli;
      }
      this.ratio = gpu > 0 ? (this.scale * cpu) / gpu : 0;
      this.version = this.mix.version;
    }
    return this.ratio;
  }

  /**
   * Stranded GPU milli after - before placing one replica of `job` with `option`; `idle` is the
   * node's idle GPU milli when the caller already knows it.
   */
  change(job: JobView, n: NodeView, option: DeviceOption, idle = -1): number {
    const ratio = this.cpuPerGpuMilli();
    if (ratio <= 0) return 0;
    if (idle < 0) {
      idle = 0;
      for (const g of n.gpus) idle += poolFree(g);
    }
    let used = 0;
    for (const pos of option.gpus) used += job.kind === 'whole' ? poolFree(n.gpus[pos]!) : job.kind === 'share' ? job.milli : 0;
    return strandedMilli(idle - used, n.cpuFree - job.cpu, ratio) - strandedMilli(idle, n.cpuFree, ratio);
  }
}

/** Idle GPU milli that `cpuFree` cannot feed at `cpuPerMilli` CPU per GPU thousandth. */
export function strandedMilli(idleMilli: number, cpuFree: number, cpuPerMilli: number): number {
  return Math.max(0, idleMilli - cpuFree / cpuPerMilli);
}

/** Minus the GPUs a placement strands for lack of CPU (see CpuStrandModel). */
function cpuStrandScore(engine: Engine, args: Record<string, unknown>): ScorePlugin {
  const model = new CpuStrandModel(engine.mix, (args.scale as number | undefined) ?? 1);
  return {
    name: 'cpu-strand',
    epoch: () => engine.mix.version,
    score: (_s, job, n, option) => -model.change(job, n, option) / 1000,
  };
}

/** Prefers busier nodes and tighter GPUs (consolidation); tiny weights make it a tie-breaker. */
function packingScore(args: Record<string, unknown>): ScorePlugin {
  const absolute = args.absolute === true;
  const tightW = (args.tight as number | undefined) ?? 0.5;
  return {
    name: 'packing',
    score(_s, job, n, option) {
      let idle = 0;
      let total = 0;
      for (const g of n.gpus) {
        idle += poolFree(g);
        if (g.usable && g.mode !== 'mig') total += 1000;
      }
      // fraction of the node's pool already in use (before), plus how tight the chosen GPU is
      let tight = 0;
      if (job.kind === 'share' && option.gpus.length) tight = 1 - (poolFree(n.gpus[option.gpus[0]!]!) - job.milli) / 1000;
      if (job.kind === 'mig' && option.gpus.length) {
        const g = n.gpus[option.gpus[0]!]!;
        let free = 0;
        for (const s of g.mig) if (!s.busy) free += s.size;
        tight = 1 - free / MIG_MEMORY_SLOTS;
      }
      if (absolute) return -idle / 8000 + tightW * tight;
      return (total > 0 ? 1 - idle / total : 0) + tightW * tight;
    },
  };
}

/** Least allocated (spreading): the more free GPU and CPU left, the better; normalised to 0..100. */
function spreadScore(): ScorePlugin {
  return {
    name: 'spread',
    score(_s, job, n, option) {
      let idle = 0;
      for (const g of n.gpus) idle += poolFree(g);
      const used = job.kind === 'whole' ? option.gpus.length * 1000 : job.kind === 'share' ? job.milli : 0;
      return (idle - used) / Math.max(1, n.gpus.length * 1000) + (n.cpuFree - job.cpu) / Math.max(1, n.cpuMilli);
    },
    normalize(_s, _j, scores) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of scores) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      for (let i = 0; i < scores.length; i++) scores[i] = hi > lo ? Math.round(((scores[i]! - lo) / (hi - lo)) * 100) : 100;
    },
  };
}

/** NVLink locality for multi-GPU replicas: fewer NVLink domains spanned is better. */
function nvlinkScore(): ScorePlugin {
  return {
    name: 'nvlink',
    score(_s, job, n, option) {
      if (job.kind !== 'whole' || option.gpus.length < 2) return 0;
      const domains = new Set(option.gpus.map((p) => n.gpus[p]!.domain));
      return -(domains.size - 1);
    },
  };
}

// ------------------------------------------------------------------ reserve, permit

function teamUsage(engine: Engine): ReservePlugin {
  const usage = engine.teamUsage;
  const add = (job: JobView, replicas: ReplicaPlacement[], sign: number) => {
    const u = usage.get(job.job.teamId) ?? { gpus: 0, cpuMilli: 0, memoryMiB: 0 };
    u.gpus += sign * replicas.length * gpuUnits(job);
    u.cpuMilli += sign * replicas.length * job.cpu;
    u.memoryMiB += sign * replicas.length * job.mem;
    usage.set(job.job.teamId, u);
  };
  return {
    name: 'team-usage',
    reserve(_s, job, replicas) {
      add(job, replicas, 1);
      return SUCCESS;
    },
    unreserve(_s, job, replicas) {
      add(job, replicas, -1);
    },
  };
}

/** GPUs as a decimal (DESIGN: a MIG slice counts compute slices / 7, a share its fraction). */
export function gpuUnits(job: JobView): number {
  if (job.kind === 'whole') return job.gpus;
  if (job.kind === 'share') return job.milli / 1000;
  // an unknown profile (never validated, never placed) counts as the smallest slice
  if (job.kind === 'mig') return migSliceFraction(job.migProfile ?? '') ?? 1 / MIG_COMPUTE_SLICES;
  return 0;
}

function gangPermit(engine: Engine): PermitPlugin {
  return {
    name: 'gang',
    permit(_s, job, replicas) {
      if (replicas.length !== job.job.replicas) {
        return unschedulable('gang_incomplete', `gang needs ${job.job.replicas} replicas at once, only ${replicas.length} placed`);
      }
      const t = job.job.topology;
      if (t.required && t.level !== 'any' && replicas.length > 1) {
        const byId = engine.nodeById;
        const keys = new Set(
          replicas.map((r) => {
            const n = byId.get(r.nodeId)!;
            return t.level === 'node' ? n.id : t.level === 'leaf' ? `${n.spine}/${n.leaf}` : n.spine;
          }),
        );
        if (keys.size > 1) return unschedulable('topology_unsatisfiable', `replicas span ${keys.size} ${t.level}s; required: one`);
      }
      return SUCCESS;
    },
  };
}

// ------------------------------------------------------------------ registries

const BUILTIN: Record<string, PluginFactory> = {
  request: (e) => requestCheck(e),
  'node-ready': () => nodeReady,
  persona: () => persona,
  'node-resources': () => nodeResources,
  'gpu-model': () => gpuModel,
  'gpu-capacity': (e) => gpuCapacity(e),
  fragmentation: (e, a) => fragmentationScore(e, a),
  fgd: (e, a) => fgdScore(e, a),
  'best-fit': (e, a) => bestFitScore(e, a),
  packing: (_e, a) => packingScore(a),
  'cpu-strand': (e, a) => cpuStrandScore(e, a),
  spread: () => spreadScore(),
  nvlink: () => nvlinkScore(),
  'team-usage': (e) => teamUsage(e),
  gang: (e) => gangPermit(e),
};

export function defaultPluginRegistry(): Registry<PluginFactory> {
  const r = new Registry<PluginFactory>('plugin');
  for (const [name, f] of Object.entries(BUILTIN)) r.register(name, f);
  return r;
}

const FILTERS = ['node-ready', 'persona', 'node-resources', 'gpu-model', 'gpu-capacity'];
const base = { preFilter: ['request'], filter: FILTERS, reserve: ['team-usage'], permit: ['gang'] };

export const PROFILES: Record<string, Profile> = {
  /**
   * Default: fragmentation gradient under the learned mix (all of it: rare small shares are the
   * ones that fill residues), CPU stranding, consolidation as a tie-breaker, NVLink locality.
   */
  gantry: {
    name: 'gantry',
    ...base,
    score: [
      // differences below 0.1 GPU of expected fragmentation are ties; each GPU left without the
      // CPU to feed it (at the mix's CPU per GPU) costs 0.2 (the cpu-strand score, folded in)...
      { name: 'fragmentation', weight: 1, args: { quantum: 0.1, strand: 0.2 } },
      // ...then the busier node and the tighter GPU (consolidation), then node order
      { name: 'packing', weight: 0.001 },
      { name: 'nvlink', weight: 1 },
    ],
    shareOrder: 'tightest',
    // the whole learned mix, looked at every x1.5 or 1,024 jobs and republished only when it moved by
    // 5% (total variation): each new version re-scores every node state
    mix: { coverage: 1, refreshStep: 1024, growth: 1.5, minChange: 0.05 },
  },
  /** Plain bin-packing (the published BestFit formula). */
  'best-fit': {
    name: 'best-fit',
    ...base,
    score: [
      { name: 'best-fit', weight: 1 },
      { name: 'nvlink', weight: 1 },
    ],
    shareOrder: 'tightest',
  },
  /** Spreading: least allocated first (e.g. for inference replicas). */
  spread: { name: 'spread', ...base, score: [{ name: 'spread', weight: 1 }], shareOrder: 'index' },
  /** FGD as published (integer score, ties by node order); pass args.shapes for the paper's fixed mix. */
  fgd: { name: 'fgd', ...base, score: [{ name: 'fgd', weight: 1 }], shareOrder: 'index' },
};

export function defaultProfileRegistry(): Registry<Profile> {
  const r = new Registry<Profile>('profile');
  for (const [name, p] of Object.entries(PROFILES)) r.register(name, p);
  return r;
}

export type { AnyPlugin };
