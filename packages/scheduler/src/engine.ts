/**
 * The placement engine: an indexed, mutable copy of a ClusterSnapshot plus the plugin
 * pipeline (PreFilter -> Filter -> Score -> Reserve -> Permit) for one job at a time.
 *
 * Speed: nodes with the same state (persona, free CPU and memory, every GPU's model, NVLink
 * domain, mode, use and MIG slices) form a class; filters and scores run once per class and
 * request shape and are cached on the class, so a scan over thousands of nodes costs one
 * lookup per distinct node state. Ties between equal scores go to the node that comes first
 * in the snapshot (a fixed order), then to the first device option.
 *
 * Pure: no clock, no randomness, no I/O. Same inputs in the same order -> same decisions.
 */
import type {
  ClusterSnapshot,
  GpuMode,
  MigSliceState,
  NodeState,
  PendingJob,
  Persona,
  PlacedGpu,
  Reason,
  ReplicaPlacement,
  ShapeCount,
  Status,
  TeamUsage,
  TopologyLevel,
} from './types';
import {
  type CycleState,
  type FilterPlugin,
  type PermitPlugin,
  type PreFilterPlugin,
  type Profile,
  type ReservePlugin,
  type ScorePlugin,
  SUCCESS,
  hasPoint,
  status,
} from './framework';
import { ShapeMix, type MixShape } from './shape-mix';
import { defaultPluginRegistry, defaultProfileRegistry } from './plugins';
import { describeRequest, formatCount } from './reasons';
import { poolFree } from './pool';

export { poolFree };

export type JobKind = 'none' | 'whole' | 'share' | 'mig';

/** A job's request as the engine reads it (computed once per job by PreFilter). */
export interface JobView {
  job: PendingJob;
  kind: JobKind;
  /** Whole GPUs per replica (kind 'whole'); 1 for share / MIG; 0 for CPU-only. */
  gpus: number;
  /** Per-GPU thousandths: 1000 for whole, the share for 'share', 0 otherwise. */
  milli: number;
  migProfile: string | null;
  models: ReadonlySet<string> | null;
  cpu: number;
  mem: number;
  persona: Persona;
  shapeId: number;
  shape: MixShape;
}

/** Devices of one node for one replica: GPU positions in node.gpus, and the MIG slice position. */
export interface DeviceOption {
  gpus: number[];
  /** Position of the MIG slice in gpus[gpus[0]].mig, or -1. */
  slice: number;
}

export interface GpuView {
  id: string;
  index: number;
  model: string;
  domain: number;
  /** healthy and schedulable */
  usable: boolean;
  mode: GpuMode;
  allocated: boolean;
  milliUsed: number;
  mig: MigSliceState[];
}

export interface NodeView {
  /** Position in the snapshot: the fixed tie-break order. */
  pos: number;
  id: string;
  name: string;
  leaf: string;
  spine: string;
  schedulable: boolean;
  persona: Persona;
  cpuMilli: number;
  memoryMiB: number;
  cpuFree: number;
  memFree: number;
  gpus: GpuView[];
  cls: NodeClass;
}

interface ClassEntry {
  status: Status | null;
  options: DeviceOption[];
  /** How many replicas of this shape the node could take alone. */
  fit: number;
  epoch: number;
  /** Raw per-plugin scores per option (kept only when a plugin normalises). */
  raw: Float64Array[];
  best: number;
  bestScore: number;
}

export interface NodeClass {
  /** Dense id (reused after the class empties). */
  id: number;
  /** Position in the engine's list of live classes. */
  live: number;
  sig: string;
  /** Positions of the nodes in this state, ascending. */
  nodes: number[];
  /** Per-plugin data about this node state (e.g. fragmentation statistics). */
  scratch: Map<string, unknown>;
}

export interface EngineOptions {
  profile?: string | Profile;
  history?: ShapeCount[];
  /** Registries to resolve plugin and profile names (default: the built-in ones). */
  plugins?: ReturnType<typeof defaultPluginRegistry>;
  profiles?: ReturnType<typeof defaultProfileRegistry>;
  /** Shape-mix learning options (coverage, refresh step). */
  mix?: { coverage?: number; refreshStep?: number; growth?: number; weighting?: 'count' | 'demand'; minChange?: number };
}

export interface PlaceResult {
  status: Status;
  replicas: ReplicaPlacement[];
}

export interface Inventory {
  /** GPU models present, with the most GPUs of that model on one node. */
  maxGpusPerNode: Map<string, number>;
  maxGpusAnyNode: number;
}

/** Per request shape: what is known about each node class (by class id), as flat arrays. */
interface ShapeBoard {
  /** 0 unknown, 1 feasible, k >= 2 filtered out with statusTable[k - 2] */
  state: Int32Array;
  epoch: Float64Array;
  score: Float64Array;
  /** With a tolerance: the secondary score of the chosen option. */
  score2: Float64Array;
  entry: (ClassEntry | undefined)[];
}

interface Journal {
  node: NodeView;
  cpu: number;
  mem: number;
  gpus: { pos: number; mode: GpuMode; allocated: boolean; milliUsed: number; mig: MigSliceState[] }[];
}

const LEVELS: TopologyLevel[] = ['node', 'leaf', 'spine', 'any'];

export class Engine {
  readonly nodes: NodeView[];
  readonly classes = new Map<string, NodeClass>();
  readonly mix: ShapeMix;
  readonly profile: Profile;
  readonly inventory: Inventory;
  private readonly preFilters: PreFilterPlugin[] = [];
  private readonly filters: FilterPlugin[] = [];
  private readonly scores: ScorePlugin[] = [];
  private readonly weights: number[] = [];
  private readonly reserves: ReservePlugin[] = [];
  private readonly permits: PermitPlugin[] = [];
  private readonly normalized: boolean;
  private readonly shapeIds = new Map<string, number>();
  private readonly boards: (ShapeBoard | undefined)[] = [];
  private classCap = 0;
  private readonly freeIds: number[] = [];
  private nextId = 0;
  private liveIds = new Int32Array(0);
  private liveCount = 0;
  private firstPos = new Int32Array(0);
  private classSize = new Int32Array(0);
  private readonly statusTable: Status[] = [];
  private readonly statusIndex = new Map<Status, number>();
  private readonly statusByText = new Map<string, number>();
  private readonly classById: (NodeClass | undefined)[] = [];
  private readonly mixShapes = new Map<string, MixShape>();
  /** Set when a plugin could not be built (unknown name, wrong extension point). */
  readonly setupStatus: Status;
  /** Resources held per team (fair-share ordering); the team-usage Reserve plugin keeps it current. */
  readonly teamUsage = new Map<string, TeamUsage>();
  /** Nodes by id. */
  readonly nodeById = new Map<string, NodeView>();

  constructor(snapshot: ClusterSnapshot, options: EngineOptions = {}) {
    const profiles = options.profiles ?? defaultProfileRegistry();
    const plugins = options.plugins ?? defaultPluginRegistry();
    let setup: Status = SUCCESS;
    const profile = typeof options.profile === 'object' ? options.profile : profiles.get(options.profile ?? 'gantry');
    if (!profile) {
      setup = status('error', 'unknown_profile', `unknown scheduling profile ${options.profile} (known: ${profiles.names().join(', ')})`);
    }
    this.profile = profile ?? profiles.get('gantry')!;
    // the profile's mix options, overridden field by field by the engine options (undefined fields ignored)
    const mixOptions: Record<string, unknown> = { ...this.profile.mix };
    for (const [k, v] of Object.entries(options.mix ?? {})) if (v !== undefined) mixOptions[k] = v;
    this.mix = new ShapeMix(mixOptions);
    this.nodes = snapshot.nodes.map((n, pos) => this.viewOf(n, pos));
    for (const n of this.nodes) {
      this.classify(n);
      this.nodeById.set(n.id, n);
    }
    const inv: Inventory = { maxGpusPerNode: new Map(), maxGpusAnyNode: 0 };
    for (const n of this.nodes) {
      const per = new Map<string, number>();
      for (const g of n.gpus) per.set(g.model, (per.get(g.model) ?? 0) + 1);
      for (const [m, c] of per) inv.maxGpusPerNode.set(m, Math.max(inv.maxGpusPerNode.get(m) ?? 0, c));
      inv.maxGpusAnyNode = Math.max(inv.maxGpusAnyNode, n.gpus.length);
    }
    this.inventory = inv;

    const build = (name: string, point: 'preFilter' | 'filter' | 'score' | 'reserve' | 'permit', args?: Record<string, unknown>) => {
      const factory = plugins.get(name);
      if (!factory) {
        setup = status('error', 'unknown_plugin', `profile ${this.profile.name} names unknown plugin ${name}`);
        return undefined;
      }
      const plugin = factory(this, { ...(this.profile.args?.[name] ?? {}), ...(args ?? {}) });
      if (!hasPoint(plugin, point)) {
        setup = status('error', 'wrong_extension_point', `plugin ${name} has no ${point} extension point`);
        return undefined;
      }
      return plugin;
    };
    for (const n of this.profile.preFilter) {
      const p = build(n, 'preFilter');
      if (p) this.preFilters.push(p as PreFilterPlugin);
    }
    for (const n of this.profile.filter) {
      const p = build(n, 'filter');
      if (p) this.filters.push(p as FilterPlugin);
    }
    for (const w of this.profile.score) {
      const p = build(w.name, 'score', w.args);
      if (p) {
        this.scores.push(p as ScorePlugin);
        this.weights.push(w.weight);
      }
    }
    for (const n of this.profile.reserve) {
      const p = build(n, 'reserve');
      if (p) this.reserves.push(p as ReservePlugin);
    }
    for (const n of this.profile.permit) {
      const p = build(n, 'permit');
      if (p) this.permits.push(p as PermitPlugin);
    }
    this.normalized = this.scores.some((s) => typeof s.normalize === 'function');
    this.setupStatus = setup;
    for (const h of options.history ?? []) this.mix.add(this.mixShape(h.request, 'container'), h.count, h.request.memoryMiB);
  }

  // ---------------------------------------------------------------- snapshot views and classes

  private viewOf(n: NodeState, pos: number): NodeView {
    const view = {
      pos,
      id: n.id,
      name: n.name,
      leaf: n.leaf,
      spine: n.spine,
      schedulable: n.schedulable,
      persona: n.persona,
      cpuMilli: n.cpuMilli,
      memoryMiB: n.memoryMiB,
      cpuFree: n.cpuMilliFree,
      memFree: n.memoryMiBFree,
      gpus: n.gpus.map((g) => ({
        id: g.id,
        index: g.index,
        model: g.model,
        domain: g.nvlinkDomain,
        usable: g.healthy && g.schedulable,
        mode: g.mode,
        allocated: g.allocated,
        milliUsed: g.sharedMilliUsed,
        mig: g.mig.map((s) => ({ ...s })),
      })),
      cls: undefined as unknown as NodeClass,
    };
    return view;
  }

  private signature(n: NodeView): string {
    let s = `${n.persona}|${n.schedulable ? 1 : 0}|${n.cpuFree}|${n.memFree}`;
    for (const g of n.gpus) {
      s += `|${g.model}:${g.domain}:${g.usable ? 1 : 0}:${g.mode}:`;
      if (g.mode === 'whole') s += g.allocated ? 1 : 0;
      else if (g.mode === 'shared') s += g.milliUsed;
      else for (const m of g.mig) s += `${m.profile}@${m.start}${m.busy ? '*' : ''},`;
    }
    return s;
  }

  private classify(n: NodeView): void {
    const old = n.cls as NodeClass | undefined;
    const sig = this.signature(n);
    if (old && old.sig === sig) return;
    if (old) {
      const i = lowerBound(old.nodes, n.pos);
      old.nodes.splice(i, 1);
      this.classSize[old.id] = old.nodes.length;
      if (old.nodes.length === 0) this.dropClass(old);
      else this.firstPos[old.id] = old.nodes[0]!;
    }
    let cls = this.classes.get(sig);
    if (!cls) cls = this.newClass(sig);
    const nodes = cls.nodes;
    if (nodes.length === 0 || nodes[nodes.length - 1]! < n.pos) nodes.push(n.pos);
    else nodes.splice(lowerBound(nodes, n.pos), 0, n.pos);
    this.firstPos[cls.id] = nodes[0]!;
    this.classSize[cls.id] = nodes.length;
    n.cls = cls;
  }

  private newClass(sig: string): NodeClass {
    const id = this.freeIds.length ? this.freeIds.pop()! : this.nextId++;
    if (id >= this.classCap) this.grow(Math.max(64, this.classCap * 2));
    for (const b of this.boards) {
      if (!b) continue;
      b.state[id] = 0;
      b.entry[id] = undefined;
    }
    const cls: NodeClass = { id, live: this.liveCount, sig, nodes: [], scratch: new Map() };
    this.liveIds[this.liveCount++] = id;
    this.classById[id] = cls;
    this.classes.set(sig, cls);
    return cls;
  }

  private dropClass(cls: NodeClass): void {
    this.classes.delete(cls.sig);
    const lastId = this.liveIds[--this.liveCount]!;
    this.liveIds[cls.live] = lastId;
    this.classById[lastId]!.live = cls.live;
    this.classById[cls.id] = undefined;
    this.freeIds.push(cls.id);
  }

  private grow(cap: number): void {
    const ids = new Int32Array(cap);
    ids.set(this.liveIds);
    this.liveIds = ids;
    const fp = new Int32Array(cap);
    fp.set(this.firstPos);
    this.firstPos = fp;
    const cs = new Int32Array(cap);
    cs.set(this.classSize);
    this.classSize = cs;
    for (const b of this.boards) if (b) this.growBoard(b, cap);
    this.classCap = cap;
  }

  private growBoard(b: ShapeBoard, cap: number): void {
    const st = new Int32Array(cap);
    st.set(b.state);
    b.state = st;
    const ep = new Float64Array(cap);
    ep.set(b.epoch);
    b.epoch = ep;
    const sc = new Float64Array(cap);
    sc.set(b.score);
    b.score = sc;
    const s2 = new Float64Array(cap);
    s2.set(b.score2);
    b.score2 = s2;
  }

  private board(shapeId: number): ShapeBoard {
    let b = this.boards[shapeId];
    if (!b) {
      b = {
        state: new Int32Array(this.classCap),
        epoch: new Float64Array(this.classCap),
        score: new Float64Array(this.classCap),
        score2: new Float64Array(this.classCap),
        entry: [],
      };
      this.boards[shapeId] = b;
    }
    return b;
  }

  // ---------------------------------------------------------------- jobs and shapes

  mixShape(req: PendingJob['request'], _persona: Persona): MixShape {
    const kind: JobKind = req.migProfile
      ? 'mig'
      : req.gpuMilli !== undefined && req.gpuMilli > 0 && req.gpuMilli < 1000
        ? 'share'
        : (req.gpus ?? 0) > 0 || req.gpuMilli === 1000
          ? 'whole'
          : 'none';
    const gpus = kind === 'whole' ? (req.gpus ?? 1) : kind === 'none' ? 0 : 1;
    const milli = kind === 'whole' ? 1000 : kind === 'share' ? req.gpuMilli! : 0;
    const models = req.gpuModels?.length ? [...new Set(req.gpuModels)].sort() : null;
    const key = `${kind}|${req.cpuMilli}|${gpus}|${milli}|${req.migProfile ?? ''}|${models ? models.join(',') : ''}`;
    let shape = this.mixShapes.get(key);
    if (!shape) {
      shape = { key, kind, cpu: req.cpuMilli, gpus, milli, migProfile: req.migProfile ?? null, models: models ? new Set(models) : null };
      this.mixShapes.set(key, shape);
    }
    return shape;
  }

  /** The engine's reading of a job's request. */
  jobView(job: PendingJob): JobView {
    const persona = job.persona ?? 'container';
    const shape = this.mixShape(job.request, persona);
    const key = `${shape.key}|${job.request.memoryMiB}|${persona}`;
    let shapeId = this.shapeIds.get(key);
    if (shapeId === undefined) {
      shapeId = this.shapeIds.size;
      this.shapeIds.set(key, shapeId);
    }
    return {
      job,
      kind: shape.kind,
      gpus: shape.gpus,
      milli: shape.milli,
      migProfile: shape.migProfile,
      models: shape.models,
      cpu: job.request.cpuMilli,
      mem: job.request.memoryMiB,
      persona,
      shapeId,
      shape,
    };
  }

  /** Lets the fragmentation model learn a job's shape (the bench calls `submit`, which does this). */
  observe(job: PendingJob): void {
    this.mix.add(this.mixShape(job.request, job.persona ?? 'container'), 1, job.request.memoryMiB);
  }

  /** Observe, then place: the single-job entry point (one arrival at a time). */
  submit(job: PendingJob): PlaceResult {
    this.observe(job);
    return this.place(job);
  }

  // ---------------------------------------------------------------- device options

  /** Every way one replica of `job` can use this node's GPUs (ignoring CPU/memory), in preference order. */
  deviceOptions(job: JobView, n: NodeView): DeviceOption[] {
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
        if (this.profile.shareOrder === 'tightest') {
          // one pass per distinct free level, tightest first; ties keep the lowest index
          const fits: number[] = [];
          for (let i = 0; i < gpus.length; i++) {
            const g = gpus[i]!;
            if (g.usable && (!models || models.has(g.model)) && poolFree(g) >= job.milli) fits.push(i);
          }
          if (fits.length > 1) fits.sort((a, b) => poolFree(gpus[a]!) - poolFree(gpus[b]!) || a - b);
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
        out.sort((a, b) => a.free - b.free || a.o.gpus[0]! - b.o.gpus[0]!);
        return out.map((x) => x.o);
      }
    }
  }

  /** How many replicas of `job` this node could take on its own. */
  private fitCount(job: JobView, n: NodeView): number {
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

  // ---------------------------------------------------------------- evaluation per class

  private epochNow(): number {
    let e = 0;
    for (const s of this.scores) if (s.epoch) e += s.epoch();
    return e;
  }

  private entry(state: CycleState, cls: NodeClass, epoch: number): ClassEntry {
    const job = state.job;
    const board = this.board(job.shapeId);
    let e = board.state[cls.id] === 0 ? undefined : board.entry[cls.id];
    if (e !== undefined && (e.status !== null || e.epoch === epoch)) return e;
    const rep = this.nodes[cls.nodes[0]!]!;
    if (!e) {
      let st: Status | null = null;
      state.options = [];
      for (const f of this.filters) {
        const s = f.filter(state, job, rep);
        if (s.code !== 'success') {
          st = s;
          break;
        }
      }
      const options = st ? [] : state.options;
      e = {
        status: st,
        options,
        fit: -1,
        epoch: -1,
        raw: this.normalized ? this.scores.map(() => new Float64Array(options.length)) : NO_RAW,
        best: -1,
        bestScore: Number.NEGATIVE_INFINITY,
      };
      board.entry[cls.id] = e;
      board.state[cls.id] = st ? 2 + this.internStatus(st) : 1;
    }
    if (e.status === null && e.epoch !== epoch) {
      const nOpt = e.options.length;
      const nScores = this.scores.length;
      let best = 0;
      let bestScore = Number.NEGATIVE_INFINITY;
      const tol = this.profile.tolerance ?? 0;
      let primaryMax = Number.NEGATIVE_INFINITY;
      let secondary = 0;
      if (tol > 0) {
        // primary (first plugin) within `tol` of the best option, then the other plugins decide
        const prim = this.tmpA.length >= nOpt ? this.tmpA : (this.tmpA = new Float64Array(nOpt * 2));
        const sec = this.tmpB.length >= nOpt ? this.tmpB : (this.tmpB = new Float64Array(nOpt * 2));
        for (let o = 0; o < nOpt; o++) {
          const option = e.options[o]!;
          prim[o] = this.weights[0]! * this.scores[0]!.score(state, job, rep, option);
          let rest = 0;
          for (let p = 1; p < nScores; p++) rest += this.weights[p]! * this.scores[p]!.score(state, job, rep, option);
          sec[o] = rest;
          if (prim[o]! > primaryMax) primaryMax = prim[o]!;
        }
        secondary = Number.NEGATIVE_INFINITY;
        for (let o = 0; o < nOpt; o++) {
          if (prim[o]! >= primaryMax - tol && sec[o]! > secondary) {
            secondary = sec[o]!;
            best = o;
          }
        }
        bestScore = prim[best]! + sec[best]!;
      } else {
        for (let o = 0; o < nOpt; o++) {
          const option = e.options[o]!;
          let total = 0;
          for (let p = 0; p < nScores; p++) {
            const v = this.scores[p]!.score(state, job, rep, option);
            if (this.normalized) e.raw[p]![o] = v;
            total += this.weights[p]! * v;
          }
          if (total > bestScore) {
            bestScore = total;
            best = o;
          }
        }
        const q = this.profile.nodeScoreQuantum ?? 0;
        if (q > 0) bestScore = Math.floor(bestScore / q + 1e-9) * q;
      }
      e.best = best;
      e.bestScore = bestScore;
      e.epoch = epoch;
      board.epoch[cls.id] = epoch;
      board.score[cls.id] = tol > 0 ? primaryMax : bestScore;
      board.score2[cls.id] = secondary;
    }
    return e;
  }

  private internStatus(st: Status): number {
    let k = this.statusIndex.get(st);
    if (k !== undefined) return k;
    const r = st.reasons[0];
    const text = `${st.code}|${r?.code}|${r?.message}`;
    k = this.statusByText.get(text);
    if (k === undefined) {
      k = this.statusTable.length;
      this.statusTable.push(st);
      this.statusByText.set(text, k);
    }
    if (this.statusIndex.size < 4096) this.statusIndex.set(st, k);
    return k;
  }

  private readonly scratchData = new Map<string, unknown>();
  private tmpA = new Float64Array(16);
  private tmpB = new Float64Array(16);
  private newState(job: JobView): CycleState {
    this.scratchData.clear();
    return { engine: this, job, options: [], data: this.scratchData };
  }

  // ---------------------------------------------------------------- placing

  /** Places every replica of a job (all or nothing) and reserves the resources in this engine. */
  place(job: PendingJob): PlaceResult {
    if (this.setupStatus.code !== 'success') return { status: this.setupStatus, replicas: [] };
    this.mix.sync();
    const jv = this.jobView(job);
    const state = this.newState(jv);
    for (const p of this.preFilters) {
      const s = p.preFilter(state, job);
      if (s.code !== 'success') return { status: s, replicas: [] };
    }
    const epoch = this.epochNow();
    let replicas: ReplicaPlacement[] | null;
    let journal: Journal[] = [];
    if (job.replicas <= 1) {
      const pick = this.normalized ? this.bestNormalized(state, epoch) : this.bestClass(state, epoch);
      if (!pick) return { status: this.explain(state, epoch, null), replicas: [] };
      journal.push(this.apply(pick.node, jv, pick.option));
      replicas = [this.placementOf(0, pick.node, jv, pick.option)];
    } else {
      const gang = this.placeGang(state, epoch);
      if (!gang.ok) return { status: this.explain(state, epoch, gang.reason), replicas: [] };
      replicas = gang.replicas;
      journal = gang.journal;
    }
    for (let i = 0; i < this.reserves.length; i++) {
      const s = this.reserves[i]!.reserve(state, jv, replicas);
      if (s.code !== 'success') {
        for (let j = i - 1; j >= 0; j--) this.reserves[j]!.unreserve(state, jv, replicas);
        this.undo(journal);
        return { status: s, replicas: [] };
      }
    }
    for (const p of this.permits) {
      const s = p.permit(state, jv, replicas);
      if (s.code !== 'success') {
        for (let j = this.reserves.length - 1; j >= 0; j--) this.reserves[j]!.unreserve(state, jv, replicas);
        this.undo(journal);
        return { status: s, replicas: [] };
      }
    }
    return { status: SUCCESS, replicas };
  }

  private bestClass(state: CycleState, epoch: number): { node: NodeView; option: DeviceOption; score: number } | null {
    const board = this.board(state.job.shapeId);
    let bestId = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    let bestPos = Number.POSITIVE_INFINITY;
    const live = this.liveIds;
    for (let i = 0; i < this.liveCount; i++) {
      const id = live[i]!;
      const st = board.state[id];
      if (st >= 2) continue;
      if (st === 0 || board.epoch[id] !== epoch) {
        if (this.entry(state, this.classById[id]!, epoch).status !== null) continue;
      }
      const s = board.score[id]!;
      if (s > bestScore || (s === bestScore && this.firstPos[id]! < bestPos)) {
        bestScore = s;
        bestPos = this.firstPos[id]!;
        bestId = id;
      }
    }
    if (bestId < 0) return null;
    const tol = this.profile.tolerance ?? 0;
    if (tol > 0) {
      // among nodes within `tol` of the best primary score: the best secondary score, then node order
      const floor = bestScore - tol;
      let best2 = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < this.liveCount; i++) {
        const id = live[i]!;
        if (board.state[id] !== 1 || board.score[id]! < floor) continue;
        const s2 = board.score2[id]!;
        if (s2 > best2 || (s2 === best2 && this.firstPos[id]! < bestPos)) {
          best2 = s2;
          bestPos = this.firstPos[id]!;
          bestId = id;
        }
      }
    }
    const e = board.entry[bestId]!;
    return { node: this.nodes[bestPos]!, option: e.options[e.best]!, score: bestScore };
  }

  /** Slow path when a score plugin normalises across candidates. */
  private bestNormalized(state: CycleState, epoch: number): { node: NodeView; option: DeviceOption } | null {
    const cands: { cls: NodeClass; e: ClassEntry; o: number }[] = [];
    for (const cls of this.classes.values()) {
      const e = this.entry(state, cls, epoch);
      if (e.status !== null) continue;
      for (let o = 0; o < e.options.length; o++) cands.push({ cls, e, o });
    }
    if (cands.length === 0) return null;
    const total = new Float64Array(cands.length);
    for (let p = 0; p < this.scores.length; p++) {
      const arr = new Float64Array(cands.length);
      cands.forEach((c, i) => (arr[i] = c.e.raw[p]![c.o]!));
      this.scores[p]!.normalize?.(state, state.job, arr);
      for (let i = 0; i < arr.length; i++) total[i]! += this.weights[p]! * arr[i]!;
    }
    let best = 0;
    for (let i = 1; i < cands.length; i++) {
      const a = cands[i]!;
      const b = cands[best]!;
      if (total[i]! > total[best]! || (total[i] === total[best] && a.cls.nodes[0]! < b.cls.nodes[0]!)) best = i;
    }
    const c = cands[best]!;
    return { node: this.nodes[c.cls.nodes[0]!]!, option: c.e.options[c.o]! };
  }

  private placeGang(state: CycleState, epoch: number): { ok: true; replicas: ReplicaPlacement[]; journal: Journal[] } | { ok: false; reason: Reason } {
    const job = state.job.job;
    const want = job.replicas;
    const maxLevel = job.topology.required ? job.topology.level : 'any';
    const top = LEVELS.indexOf(maxLevel);
    // feasible nodes with how many replicas each could take
    const feasible: { n: NodeView; fit: number }[] = [];
    for (const cls of this.classes.values()) {
      const e = this.entry(state, cls, epoch);
      if (e.status !== null) continue;
      if (e.fit < 0) e.fit = this.fitCount(state.job, this.nodes[cls.nodes[0]!]!);
      if (e.fit <= 0) continue;
      for (const pos of cls.nodes) feasible.push({ n: this.nodes[pos]!, fit: e.fit });
    }
    feasible.sort((a, b) => a.n.pos - b.n.pos);
    let bestCapacity = 0;
    for (let li = 0; li <= top; li++) {
      const level = LEVELS[li]!;
      const domains = new Map<string, { nodes: NodeView[]; cap: number }>();
      for (const f of feasible) {
        const key = level === 'node' ? f.n.id : level === 'leaf' ? `${f.n.spine}/${f.n.leaf}` : level === 'spine' ? f.n.spine : '*';
        let d = domains.get(key);
        if (!d) domains.set(key, (d = { nodes: [], cap: 0 }));
        d.nodes.push(f.n);
        d.cap += f.fit;
      }
      // the tightest domain that holds the gang (least spare room), then the earliest; a domain
      // whose summed per-node room covers the gang always succeeds greedily (each replica uses
      // one unit of one node's room), so only the chosen domain is simulated
      let chosen: { slack: number; first: number; nodes: NodeView[] } | null = null;
      for (const d of domains.values()) {
        if (li === top) bestCapacity = Math.max(bestCapacity, d.cap);
        if (d.cap < want) continue;
        const slack = d.cap - want;
        const first = d.nodes[0]!.pos;
        if (!chosen || slack < chosen.slack || (slack === chosen.slack && first < chosen.first)) chosen = { slack, first, nodes: d.nodes };
      }
      if (chosen) {
        const sim = this.greedy(state, epoch, chosen.nodes, want);
        if (sim) return { ok: true, replicas: sim.replicas, journal: sim.journal };
      }
    }
    const where =
      maxLevel === 'node' ? 'on one node' : maxLevel === 'leaf' ? 'under one leaf switch' : maxLevel === 'spine' ? 'under one spine' : 'in the cluster';
    const best = maxLevel === 'any' ? 'the cluster' : maxLevel === 'node' ? 'the best node' : `the best ${maxLevel}`;
    return {
      ok: false,
      reason: {
        code: maxLevel === 'any' ? 'gang_unsatisfiable' : 'topology_unsatisfiable',
        message: `needs ${want} x ${describeRequest(job.request)} ${where}: ${best} has room for ${formatCount(Math.min(bestCapacity, want - 1))}`,
      },
    };
  }

  private greedy(
    state: CycleState,
    epoch: number,
    nodes: NodeView[],
    want: number,
  ): { replicas: ReplicaPlacement[]; journal: Journal[]; score: number } | null {
    const replicas: ReplicaPlacement[] = [];
    const journal: Journal[] = [];
    let total = 0;
    for (let r = 0; r < want; r++) {
      let best: NodeView | null = null;
      let bestE: ClassEntry | null = null;
      for (const n of nodes) {
        const e = this.entry(state, n.cls, epoch);
        if (e.status !== null) continue;
        if (!bestE || e.bestScore > bestE.bestScore || (e.bestScore === bestE.bestScore && n.pos < best!.pos)) {
          best = n;
          bestE = e;
        }
      }
      if (!best || !bestE) {
        this.undo(journal);
        return null;
      }
      const option = bestE.options[bestE.best]!;
      total += bestE.bestScore;
      journal.push(this.apply(best, state.job, option));
      replicas.push(this.placementOf(r, best, state.job, option));
    }
    return { replicas, journal, score: total };
  }

  // ---------------------------------------------------------------- mutation and undo

  private apply(n: NodeView, job: JobView, option: DeviceOption): Journal {
    const j: Journal = { node: n, cpu: n.cpuFree, mem: n.memFree, gpus: [] };
    for (const pos of option.gpus) {
      const g = n.gpus[pos]!;
      j.gpus.push({ pos, mode: g.mode, allocated: g.allocated, milliUsed: g.milliUsed, mig: g.mig });
      if (job.kind === 'whole') g.allocated = true;
      else if (job.kind === 'share') {
        if (g.mode === 'whole') g.mode = 'shared';
        g.milliUsed += job.milli;
      } else if (job.kind === 'mig') {
        g.mig = g.mig.map((s, i) => (i === option.slice ? { ...s, busy: true } : s));
      }
    }
    n.cpuFree -= job.cpu;
    n.memFree -= job.mem;
    this.classify(n);
    return j;
  }

  private undo(journal: Journal[]): void {
    for (let i = journal.length - 1; i >= 0; i--) {
      const j = journal[i]!;
      j.node.cpuFree = j.cpu;
      j.node.memFree = j.mem;
      for (const s of j.gpus) {
        const g = j.node.gpus[s.pos]!;
        g.mode = s.mode;
        g.allocated = s.allocated;
        g.milliUsed = s.milliUsed;
        g.mig = s.mig;
      }
      this.classify(j.node);
    }
    journal.length = 0;
  }

  /**
   * "What if these allocations were removed": frees the devices of a placement (for preemption
   * what-ifs and for tests). Returns an undo function.
   */
  release(replicas: ReplicaPlacement[], request: PendingJob['request']): () => void {
    const journal: Journal[] = [];
    const jv = this.jobView({
      id: '',
      teamId: '',
      priority: 0,
      createdAtMs: 0,
      replicas: replicas.length,
      request,
      topology: { level: 'any', required: false },
    });
    for (const r of replicas) {
      const n = this.nodeById.get(r.nodeId);
      if (!n) continue;
      const j: Journal = { node: n, cpu: n.cpuFree, mem: n.memFree, gpus: [] };
      for (const pg of r.gpus) {
        const pos = n.gpus.findIndex((g) => g.id === pg.gpuId);
        if (pos < 0) continue;
        const g = n.gpus[pos]!;
        j.gpus.push({ pos, mode: g.mode, allocated: g.allocated, milliUsed: g.milliUsed, mig: g.mig });
        if (pg.migProfile !== undefined) g.mig = g.mig.map((s) => (s.start === pg.migStart && s.profile === pg.migProfile ? { ...s, busy: false } : s));
        else if (pg.milli !== undefined) g.milliUsed = Math.max(0, g.milliUsed - pg.milli);
        else g.allocated = false;
      }
      n.cpuFree += jv.cpu;
      n.memFree += jv.mem;
      this.classify(n);
      journal.push(j);
    }
    return () => this.undo(journal);
  }

  private placementOf(replica: number, n: NodeView, job: JobView, option: DeviceOption): ReplicaPlacement {
    const gpus: PlacedGpu[] = option.gpus.map((pos) => {
      const g = n.gpus[pos]!;
      if (job.kind === 'share') return { gpuId: g.id, index: g.index, milli: job.milli };
      if (job.kind === 'mig') {
        const s = g.mig[option.slice]!;
        return { gpuId: g.id, index: g.index, migProfile: s.profile, migStart: s.start };
      }
      return { gpuId: g.id, index: g.index };
    });
    return { replica, nodeId: n.id, gpus };
  }

  // ---------------------------------------------------------------- explaining

  /** Aggregated, readable reasons ("1,180 nodes: not enough free GPU share; 33 nodes: GPU model not allowed"). */
  private explain(state: CycleState, epoch: number, topology: Reason | null): Status {
    // flat arrays only: per class its state (status index) and size
    const board = this.board(state.job.shapeId);
    for (let i = 0; i < this.liveCount; i++) {
      const id = this.liveIds[i]!;
      if (board.state[id] === 0) this.entry(state, this.classById[id]!, epoch);
    }
    const counts = new Float64Array(this.statusTable.length);
    let fitting = 0;
    for (let i = 0; i < this.liveCount; i++) {
      const id = this.liveIds[i]!;
      const st = board.state[id]!;
      if (st === 1) fitting += this.classSize[id]!;
      else counts[st - 2]! += this.classSize[id]!;
    }
    const byCode = new Map<string, { count: number; message: string }>();
    for (let k = 0; k < this.statusTable.length; k++) {
      if (!counts[k]) continue;
      const r = this.statusTable[k]!.reasons[0] ?? { code: 'unschedulable', message: 'does not fit' };
      const agg = byCode.get(r.code);
      if (agg) agg.count += counts[k]!;
      else byCode.set(r.code, { count: counts[k]!, message: r.message });
    }
    const parts = [...byCode.entries()].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1));
    const job = state.job.job;
    const total = this.nodes.length;
    const detail = parts.map(([, v]) => `${formatCount(v.count)} node${v.count === 1 ? '' : 's'}: ${v.message}`).join('; ');
    const head = topology
      ? topology
      : {
          code: 'insufficient_resources',
          message: `needs ${job.replicas > 1 ? `${job.replicas} x ` : ''}${describeRequest(job.request)}: ${formatCount(fitting)} of ${formatCount(total)} nodes fit${detail ? ` (${detail})` : ''}`,
        };
    const reasons: Reason[] = [head];
    for (const [code, v] of parts) reasons.push({ code, message: `${formatCount(v.count)} node${v.count === 1 ? '' : 's'}: ${v.message}` });
    return { code: 'unschedulable', reasons };
  }
}

/** Shared (never written) raw-score list for entries when no plugin normalises. */
const NO_RAW: Float64Array[] = [];
const SINGLES: DeviceOption[] = [];
/** Shared, frozen option for "GPU at position i" (options are never mutated). */
function single(i: number): DeviceOption {
  let o = SINGLES[i];
  if (!o) SINGLES[i] = o = Object.freeze({ gpus: Object.freeze([i]) as number[], slice: -1 });
  return o;
}
const NO_DEVICE: DeviceOption[] = Object.freeze([Object.freeze({ gpus: Object.freeze([]) as unknown as number[], slice: -1 })]) as DeviceOption[];

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

function lowerBound(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Chooses `k` of the free GPUs (positions) keeping NVLink locality: the tightest NVLink domain
 * that holds all k; otherwise the fewest domains, largest first. Lowest indices inside a domain.
 */
export function pickNvlink(n: NodeView, free: number[], k: number): number[] {
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
