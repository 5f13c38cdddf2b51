/**
 * The placement engine: an indexed, mutable copy of a ClusterSnapshot plus the plugin
 * pipeline (PreFilter -> Filter -> Score -> Reserve -> Permit) for one job at a time.
 *
 * This file is the pipeline only. Its parts, each in its own file:
 *   views.ts           the engine's working types (JobView, NodeView, DeviceOption, EngineHandle)
 *   framework.ts       extension points, statuses, registries, profiles' shape
 *   plugins/*.ts       the built-in plugins, one file per family (filters, fragmentation,
 *                      cpu-strand, fit, topology, reserve-permit); registry.ts names them
 *   profiles.ts        the built-in profiles (gantry, best-fit, spread, fgd)
 *   fragmentation.ts   the fragmentation model; cpu-strand.ts the CPU-stranding model;
 *                      model-pressure.ts the demand pinned to each GPU model;
 *                      whole-host.ts the nodes the largest whole-GPU shape still needs whole
 *   shape-mix.ts       the learned mix of request shapes
 *   node-classes.ts    node classes and the per-shape board (the cache that makes a scan cheap)
 *   device-options.ts  the ways one replica can use a node's GPUs
 *   gang.ts            gang placement (all replicas or none, topology domains)
 *   journal.ts         mutation and undo; explain.ts readable reasons
 *
 * Speed: nodes with the same state form a class; filters and scores run once per class and
 * request shape and are cached on the class's entry in the shape's board. Ties between equal
 * scores go to the node that comes first in the snapshot (a fixed order), then to the first
 * device option.
 *
 * Pure: no clock, no randomness, no I/O. Same inputs in the same order -> same decisions.
 */
import type { ClusterSnapshot, NodeState, PendingJob, Persona, Reason, ReplicaPlacement, ShapeCount, Status, TeamUsage } from './types';
import {
  type CycleState,
  type FilterPlugin,
  type PermitPlugin,
  type PluginRegistry,
  type PreFilterPlugin,
  type Profile,
  type ProfileRegistry,
  type ReservePlugin,
  type ScorePlugin,
  SUCCESS,
  hasPoint,
  status,
} from './framework';
import { ShapeMix, type MixShape } from './shape-mix';
import { defaultPluginRegistry } from './registry';
import { defaultProfileRegistry } from './profiles';
import { deviceOptions } from './device-options';
import { NodeClassIndex, signature, type ClassEntry } from './node-classes';
import { applyReplica, type Journal, placementOf, releaseReplica, restore } from './journal';
import { type GangHost, placeGang } from './gang';
import { explainUnschedulable } from './explain';
import type { DeviceOption, EngineHandle, GpuView, Inventory, JobKind, JobView, NodeClass, NodeView, PlaceResult } from './views';

export interface EngineOptions {
  profile?: string | Profile;
  history?: ShapeCount[];
  /** Registries to resolve plugin and profile names (default: the built-in ones). */
  plugins?: PluginRegistry;
  profiles?: ProfileRegistry;
  /** Shape-mix learning options (coverage, refresh step). */
  mix?: { coverage?: number; refreshStep?: number; growth?: number; weighting?: 'count' | 'demand'; minChange?: number };
  /** See CycleOptions.frozenStates. */
  frozenStates?: boolean;
}

/** Shared (never written) raw-score list for entries when no plugin normalises. */
const NO_RAW: Float64Array[] = [];

export class Engine implements EngineHandle {
  readonly nodes: NodeView[];
  /** Live node classes by state signature. */
  readonly classes: Map<string, NodeClass>;
  readonly mix: ShapeMix;
  readonly profile: Profile;
  readonly inventory: Inventory;
  private readonly index = new NodeClassIndex();
  private readonly preFilters: PreFilterPlugin[] = [];
  private readonly filters: FilterPlugin[] = [];
  private readonly scores: ScorePlugin[] = [];
  private readonly weights: number[] = [];
  private readonly reserves: ReservePlugin[] = [];
  private readonly permits: PermitPlugin[] = [];
  private readonly normalized: boolean;
  private readonly shapeIds = new Map<string, number>();
  private readonly statusTable: Status[] = [];
  private readonly statusIndex = new Map<Status, number>();
  private readonly statusByText = new Map<string, number>();
  private readonly mixShapes = new Map<string, MixShape>();
  private readonly gangHost: GangHost;
  /** Set when a plugin could not be built (unknown name, wrong extension point). */
  readonly setupStatus: Status;
  /** Resources held per team (fair-share ordering); the team-usage Reserve plugin keeps it current. */
  readonly teamUsage = new Map<string, TeamUsage>();
  private byId?: Map<string, NodeView>;
  /** Nodes by id (built on first use: a cycle's engine seldom needs it). */
  get nodeById(): ReadonlyMap<string, NodeView> {
    return (this.byId ??= new Map(this.nodes.map((n) => [n.id, n])));
  }

  constructor(snapshot: ClusterSnapshot, options: EngineOptions = {}) {
    this.classes = this.index.classes;
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
    // at most one live class per node: the flat arrays never have to grow
    this.index.reserve(snapshot.nodes.length);
    this.nodes = snapshot.nodes.map((state, pos) => {
      if (!options.frozenStates) {
        const n = viewOf(state, pos, gpuViews(state, true), false);
        this.index.classify(n);
        return n;
      }
      const kept = frozenViewOf(state);
      const n = viewOf(state, pos, kept.gpus, true);
      this.index.classify(n, (kept.sig ??= signature(n)));
      return n;
    });
    const inv: Inventory = { maxGpusPerNode: new Map(), maxGpusAnyNode: 0 };
    // the nodes of a class have the same GPUs: one node per class
    for (const cls of this.classes.values()) {
      const n = this.nodes[cls.nodes[0]!]!;
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
    this.gangHost = {
      nodes: this.nodes,
      classes: this.classes,
      entry: (state, cls, epoch) => this.entry(state, cls, epoch),
      apply: (n, job, option) => this.apply(n, job, option),
      undo: (journal) => this.undo(journal),
    };
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

  /** Every way one replica of `job` can use this node's GPUs (ignoring CPU/memory), in preference order. */
  deviceOptions(job: JobView, n: NodeView): DeviceOption[] {
    return deviceOptions(job, n, this.profile.shareOrder);
  }

  // ---------------------------------------------------------------- evaluation per class

  private epochNow(): number {
    let e = 0;
    for (const s of this.scores) if (s.epoch) e += s.epoch();
    return e;
  }

  private entry(state: CycleState, cls: NodeClass, epoch: number): ClassEntry {
    const job = state.job;
    const board = this.index.board(job.shapeId);
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
      replicas = [placementOf(0, pick.node, jv, pick.option)];
    } else {
      const gang = placeGang(this.gangHost, state, epoch);
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
    const index = this.index;
    const board = index.board(state.job.shapeId);
    const firstPos = index.firstPos;
    let bestId = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    let bestPos = Number.POSITIVE_INFINITY;
    const live = index.liveIds;
    for (let i = 0; i < index.liveCount; i++) {
      const id = live[i]!;
      const st = board.state[id];
      if (st >= 2) continue;
      if (st === 0 || board.epoch[id] !== epoch) {
        if (this.entry(state, index.classById[id]!, epoch).status !== null) continue;
      }
      const s = board.score[id]!;
      if (s > bestScore || (s === bestScore && firstPos[id]! < bestPos)) {
        bestScore = s;
        bestPos = firstPos[id]!;
        bestId = id;
      }
    }
    if (bestId < 0) return null;
    const tol = this.profile.tolerance ?? 0;
    if (tol > 0) {
      // among nodes within `tol` of the best primary score: the best secondary score, then node order
      const floor = bestScore - tol;
      let best2 = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < index.liveCount; i++) {
        const id = live[i]!;
        if (board.state[id] !== 1 || board.score[id]! < floor) continue;
        const s2 = board.score2[id]!;
        if (s2 > best2 || (s2 === best2 && firstPos[id]! < bestPos)) {
          best2 = s2;
          bestPos = firstPos[id]!;
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

  /** Each live node class: its first node and its size (NodeStates: free-capacity signals sum per state). */
  eachState(fn: (n: NodeView, count: number) => void): void {
    const ix = this.index;
    for (let i = 0; i < ix.liveCount; i++) {
      const id = ix.liveIds[i]!;
      fn(this.nodes[ix.firstPos[id]!]!, ix.classSize[id]!);
    }
  }

  // ---------------------------------------------------------------- mutation and undo

  private apply(n: NodeView, job: JobView, option: DeviceOption): Journal {
    const j = applyReplica(n, job, option);
    this.index.classify(n);
    return j;
  }

  private undo(journal: Journal[]): void {
    for (let i = journal.length - 1; i >= 0; i--) {
      const j = journal[i]!;
      restore(j);
      this.index.classify(j.node);
    }
    journal.length = 0;
  }

  /**
   * Re-files a node in its class after its views were changed outside `place`/`release` (a
   * replay that turns a GPU whose last share left back into a whole GPU, as the worker's next
   * snapshot would show it).
   */
  refile(n: NodeView): void {
    this.index.classify(n);
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
      journal.push(releaseReplica(n, jv, r));
      this.index.classify(n);
    }
    return () => this.undo(journal);
  }

  // ---------------------------------------------------------------- explaining

  /** Aggregated, readable reasons ("1,180 nodes: not enough free GPU share; 33 nodes: GPU model not allowed"). */
  private explain(state: CycleState, epoch: number, topology: Reason | null): Status {
    // every live class evaluated on the job's board first (flat arrays only)
    const index = this.index;
    const board = index.board(state.job.shapeId);
    for (let i = 0; i < index.liveCount; i++) {
      const id = index.liveIds[i]!;
      if (board.state[id] === 0) this.entry(state, index.classById[id]!, epoch);
    }
    return explainUnschedulable(index, state.job.shapeId, this.statusTable, this.nodes.length, state.job.job, topology);
  }
}

/**
 * What the engines built on a frozen state (EngineOptions.frozenStates) share, by that state: its
 * GPU views and its node signature. The worker's snapshot derives a state once per changed node,
 * so a cycle at 10,000 nodes builds 80,000 GPU views and their signatures only for the nodes
 * that changed. The views are frozen: a write outside journal.ts's copy-on-write throws.
 */
const frozenViews = new WeakMap<NodeState, { gpus: readonly GpuView[]; sig?: string }>();

function frozenViewOf(state: NodeState): { gpus: readonly GpuView[]; sig?: string } {
  let kept = frozenViews.get(state);
  if (!kept) frozenViews.set(state, (kept = { gpus: Object.freeze(gpuViews(state, false).map((g) => Object.freeze(g))) }));
  return kept;
}

function gpuViews(n: NodeState, copySlices: boolean): GpuView[] {
  return n.gpus.map((g) => ({
    id: g.id,
    index: g.index,
    model: g.model,
    domain: g.nvlinkDomain,
    usable: g.healthy && g.schedulable,
    mode: g.mode,
    allocated: g.allocated,
    milliUsed: g.sharedMilliUsed,
    // the engine replaces a GPU's slice list, never a slice in place: a frozen state's can be shared
    mig: copySlices ? g.mig.map((s) => ({ ...s })) : g.mig,
  }));
}

function viewOf(n: NodeState, pos: number, gpus: readonly GpuView[], shared: boolean): NodeView {
  return {
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
    gpus: gpus as GpuView[],
    gpusShared: shared,
    cls: undefined as unknown as NodeClass,
  };
}
