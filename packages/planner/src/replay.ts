/**
 * The replay: one policy, one workload, one cluster, over simulated time. Jobs arrive, wait in a
 * queue, are placed by the scheduling engine (@gantry/scheduler, the worker's engine) in arrival
 * order with backfill (a job that does not fit does not block the ones behind it, as in the
 * worker's cycle), run for their duration and leave. Optionally the power-management rule
 * (power.ts) powers empty nodes down and boots nodes for queued demand.
 *
 * Everything observable is integrated over time (piecewise constant between events): GPU
 * allocation, SM use, GPU memory use, power, queue length, fragmentation while jobs wait.
 */
import { Engine, type ClusterSnapshot, type NodeState, type PendingJob, type ReplicaPlacement, type ReplicaRequest, type ShapeCount } from '@gantry/scheduler';
import { migSliceFraction } from '@gantry/contracts';
import { fitsEmpty, nodeState, type PlannerNode } from './cluster';
import { TimeHeap } from './heap';
import { choosePowerDowns, drawW, nodePower, type NodePower, type PowerOptions, type PowerState } from './power';
import type { PolicySetup } from './policies';
import type { PlannerJob } from './workload';

export class PlanCancelled extends Error {
  constructor() {
    super('the run was cancelled');
    this.name = 'PlanCancelled';
  }
}

export interface ReplayHooks {
  /** Called now and then with the share of arrivals processed (0..1). */
  onProgress?: (fraction: number) => void;
  /** Return true to stop the replay (it throws PlanCancelled). */
  shouldStop?: () => boolean;
  /** Admission before placement (quotas): false keeps the job queued, as a job over its team's limit waits. */
  admit?: (job: PlannerJob) => boolean;
  /** A job was placed at `t` (seconds) on `replicas`. */
  onStart?: (job: PlannerJob, replicas: readonly ReplicaPlacement[], t: number) => void;
  /** A job's run ended at `t` and its GPUs were released. */
  onEnd?: (job: PlannerJob, replicas: readonly ReplicaPlacement[], t: number) => void;
}

/** Integrals of the observables over [0, horizon], and per time bucket. */
export interface Integrals {
  allocGpuS: number;
  smGpuS: number;
  memMiBS: number;
  gpusOnS: number;
  memOnMiBS: number;
  busyGpuS: number;
  busyMemMiBS: number;
  energyJ: number;
  fragS: number;
  fragGpuS: number;
  fragOnGpuS: number;
}

export interface Bucket {
  alloc: number;
  sm: number;
  mem: number;
  gpusOn: number;
  memOn: number;
  energyJ: number;
  queued: number;
}

export interface ReplayOutcome {
  endTime: number;
  integrals: Integrals;
  buckets: Bucket[];
  bucketSeconds: number;
  waits: number[];
  placed: number;
  unplaced: number;
  powerDowns: number;
  powerUps: number;
  totalGpus: number;
  totalMemMiB: number;
}

interface Running {
  job: PlannerJob;
  request: ReplicaRequest;
  replicas: ReplicaPlacement[];
  nodes: number[];
  sm: number;
}

const EMPTY_INTEGRALS = (): Integrals => ({
  allocGpuS: 0,
  smGpuS: 0,
  memMiBS: 0,
  gpusOnS: 0,
  memOnMiBS: 0,
  busyGpuS: 0,
  busyMemMiBS: 0,
  energyJ: 0,
  fragS: 0,
  fragGpuS: 0,
  fragOnGpuS: 0,
});

function shareOf(r: ReplicaRequest): number {
  if (r.gpus) return r.gpus;
  if (r.gpuMilli) return r.gpuMilli / 1000;
  if (r.migProfile) return migSliceFraction(r.migProfile) ?? 1 / 7;
  return 0;
}

function requestKey(r: ReplicaRequest, replicas: number): string {
  return `${r.cpuMilli}|${r.memoryMiB}|${r.gpus ?? 0}|${r.gpuMilli ?? 0}|${r.migProfile ?? ''}|${r.gpuModels?.join(',') ?? ''}|${replicas}`;
}

/**
 * A replay in progress. `run()` plays the workload until no job is left to start or finish;
 * `extendTo(t)` lets the cluster idle (and power management act) up to a common horizon.
 */
export class Replay {
  private engine!: Engine;
  private readonly power: NodePower[];
  private readonly state: PowerState[];
  private readonly jobsOn: Int32Array;
  private readonly emptySince: Float64Array;
  private readonly sm: Float64Array;
  private readonly index = new Map<string, number>();
  private readonly gpuUse = new Map<string, number>();
  private readonly departures = new TimeHeap<Running>();
  private readonly transitions = new TimeHeap<number>();
  private readonly idleTimers = new TimeHeap<number>();
  private readonly idleReady = new Set<number>();
  private readonly history = new Map<string, ShapeCount>();
  private queue: PlannerJob[] = [];
  private readonly enqueuedAt = new Map<PlannerJob, number>();
  private t = 0;
  private arrivalPos = 0;
  private rebuild = false;
  private dirty = false;
  // current values of the observables
  private alloc = 0;
  private smTotal = 0;
  private memNow = 0;
  private gpusOn = 0;
  private memOn = 0;
  private busyGpus = 0;
  private busyMem = 0;
  private powerW = 0;
  private queuedGpus = 0;
  private freeWhole = 0;
  readonly totals = EMPTY_INTEGRALS();
  readonly buckets: Bucket[] = [];
  readonly waits: number[] = [];
  private placed = 0;
  private powerDowns = 0;
  private powerUps = 0;
  private readonly totalGpus: number;
  private readonly totalMemMiB: number;
  private steps = 0;

  constructor(
    private readonly nodes: PlannerNode[],
    private readonly jobs: PlannerJob[],
    private readonly policy: PolicySetup,
    private readonly pm: PowerOptions | null,
    private readonly bucketSeconds: number,
    private readonly hooks: ReplayHooks = {},
  ) {
    const n = nodes.length;
    this.power = nodes.map(nodePower);
    this.state = new Array<PowerState>(n).fill('on');
    this.jobsOn = new Int32Array(n);
    this.emptySince = new Float64Array(n);
    this.sm = new Float64Array(n);
    nodes.forEach((node, i) => this.index.set(node.id, i));
    this.totalGpus = nodes.reduce((s, x) => s + x.gpus, 0);
    this.totalMemMiB = nodes.reduce((s, x, i) => s + x.gpus * this.power[i]!.gpuMemoryMiB, 0);
    this.gpusOn = this.totalGpus;
    this.memOn = this.totalMemMiB;
    this.freeWhole = this.totalGpus;
    this.powerW = this.power.reduce((s, p) => s + p.idleW, 0);
    this.engine = new Engine({ nodes: nodes.map((x) => nodeState(x)) }, { profile: policy.profile, plugins: policy.plugins });
    if (pm) for (let i = 0; i < n; i++) this.idleTimers.push(pm.idleSeconds, i);
  }

  get now(): number {
    return this.t;
  }

  /**
   * Adds a job to the workload while the replay runs (from a hook: a job a fault took away,
   * submitted again). It arrives at its `arrival`, no earlier than now.
   */
  submit(job: PlannerJob): void {
    const arrival = Math.max(job.arrival, this.t);
    const jobs = this.jobs;
    let i = this.arrivalPos;
    while (i < jobs.length && jobs[i]!.arrival <= arrival) i++;
    jobs.splice(i, 0, { ...job, arrival });
  }

  /** Plays the workload until nothing is left to arrive, finish or boot, or up to `until` (events at `until` included). */
  run(until = Infinity): this {
    const jobs = this.jobs;
    for (;;) {
      const work = Math.min(this.arrivalPos < jobs.length ? jobs[this.arrivalPos]!.arrival : Infinity, this.departures.peekTime(), this.transitions.peekTime());
      if (work === Infinity || work > until) break;
      // power management acts between events too (a node's idle time running out)
      const next = Math.min(work, this.pm ? this.idleTimers.peekTime() : Infinity);
      this.step(Math.max(next, this.t));
      if ((++this.steps & 255) === 0) {
        if (this.hooks.shouldStop?.()) throw new PlanCancelled();
        this.hooks.onProgress?.(this.arrivalPos / Math.max(1, jobs.length));
      }
    }
    return this;
  }

  /** Idles the cluster up to `until` (power management keeps acting). */
  extendTo(until: number): this {
    for (;;) {
      const next = Math.min(this.transitions.peekTime(), this.pm ? this.idleTimers.peekTime() : Infinity);
      if (next > until) break;
      this.step(next);
    }
    if (until > this.t) this.advance(until);
    return this;
  }

  outcome(): ReplayOutcome {
    return {
      endTime: this.t,
      integrals: this.totals,
      buckets: this.buckets,
      bucketSeconds: this.bucketSeconds,
      waits: this.waits,
      placed: this.placed,
      unplaced: this.queue.length,
      powerDowns: this.powerDowns,
      powerUps: this.powerUps,
      totalGpus: this.totalGpus,
      totalMemMiB: this.totalMemMiB,
    };
  }

  // ---------------------------------------------------------------- one event time

  private step(at: number): void {
    this.advance(at);
    const t = this.t;
    while (this.departures.peekTime() <= t) this.depart(this.departures.pop()!);
    while (this.transitions.peekTime() <= t) this.finishTransition(this.transitions.pop()!);
    while (this.idleTimers.peekTime() <= t) {
      const i = this.idleTimers.pop()!;
      if (this.state[i] === 'on' && this.jobsOn[i] === 0 && t - this.emptySince[i]! >= this.pm!.idleSeconds) this.idleReady.add(i);
    }
    const jobs = this.jobs;
    while (this.arrivalPos < jobs.length && jobs[this.arrivalPos]!.arrival <= t) {
      const j = jobs[this.arrivalPos++]!;
      this.queue.push(j);
      this.enqueuedAt.set(j, t);
      this.queuedGpus += shareOf(j.request) * j.replicas;
      if (this.policy.learn) this.observe(j);
      this.dirty = true;
    }
    if (this.rebuild && this.dirty && this.queue.length) this.rebuildEngine();
    const unfit = this.dirty && this.queue.length ? this.schedule() : [];
    if (this.pm) this.managePower(unfit);
  }

  private observe(j: PlannerJob): void {
    const req = this.policy.request(j);
    const pj = this.pending(j, req);
    this.engine.observe(pj);
    const key = requestKey(req, 1);
    const h = this.history.get(key);
    if (h) h.count++;
    else this.history.set(key, { request: req, count: 1 });
  }

  private pending(j: PlannerJob, request: ReplicaRequest): PendingJob {
    return {
      id: j.id,
      teamId: j.teamId,
      priority: j.priority,
      createdAtMs: j.arrival * 1000,
      replicas: j.replicas,
      request,
      topology: this.policy.topology(j),
    };
  }

  /** One pass over the queue in order; returns the jobs that did not fit. */
  private schedule(): PlannerJob[] {
    this.dirty = false;
    const failed = new Set<string>();
    const left: PlannerJob[] = [];
    for (const j of this.queue) {
      const req = this.policy.request(j);
      const key = requestKey(req, j.replicas);
      if (failed.has(key) || (this.hooks.admit && !this.hooks.admit(j))) {
        left.push(j);
        continue;
      }
      const res = this.engine.place(this.pending(j, req));
      if (res.status.code !== 'success') {
        failed.add(key);
        left.push(j);
        continue;
      }
      this.start(j, req, res.replicas);
    }
    this.queue = left;
    return left;
  }

  private start(j: PlannerJob, req: ReplicaRequest, replicas: ReplicaPlacement[]): void {
    const t = this.t;
    this.waits.push(t - j.arrival);
    this.enqueuedAt.delete(j);
    this.placed++;
    this.queuedGpus -= shareOf(j.request) * j.replicas;
    const smPer = shareOf(j.request);
    const allocPer = shareOf(req);
    const nodes: number[] = [];
    for (const r of replicas) {
      const i = this.index.get(r.nodeId)!;
      nodes.push(i);
      this.jobsOn[i]!++;
      this.idleReady.delete(i);
      this.setSm(i, this.sm[i]! + smPer);
      this.alloc += allocPer;
      this.memNow += smPer * this.power[i]!.gpuMemoryMiB;
      for (const g of r.gpus) {
        const c = this.gpuUse.get(g.gpuId) ?? 0;
        if (c === 0) {
          this.busyGpus++;
          this.busyMem += this.power[i]!.gpuMemoryMiB;
        }
        this.gpuUse.set(g.gpuId, c + 1);
      }
    }
    this.freeWhole -= allocPer * replicas.length;
    const run: Running = { job: j, request: req, replicas, nodes, sm: smPer };
    this.departures.push(t + j.duration, run);
    this.hooks.onStart?.(j, replicas, t);
  }

  private depart(r: Running): void {
    this.engine.release(r.replicas, r.request);
    if (r.request.gpuMilli) this.wholeAgain(r);
    const allocPer = shareOf(r.request);
    r.replicas.forEach((rep, k) => {
      const i = r.nodes[k]!;
      this.setSm(i, Math.max(0, this.sm[i]! - r.sm));
      this.alloc -= allocPer;
      this.memNow -= r.sm * this.power[i]!.gpuMemoryMiB;
      for (const g of rep.gpus) {
        const c = this.gpuUse.get(g.gpuId)! - 1;
        if (c === 0) {
          this.gpuUse.delete(g.gpuId);
          this.busyGpus--;
          this.busyMem -= this.power[i]!.gpuMemoryMiB;
        } else this.gpuUse.set(g.gpuId, c);
      }
      if (--this.jobsOn[i]! === 0) {
        this.emptySince[i] = this.t;
        if (this.pm) this.idleTimers.push(this.t + this.pm.idleSeconds, i);
      }
    });
    this.freeWhole += allocPer * r.replicas.length;
    this.dirty = true;
    this.hooks.onEnd?.(r.job, r.replicas, this.t);
  }

  /**
   * Engine.release leaves a GPU whose last share left in 'shared' mode with nothing used; the
   * worker's next snapshot shows it whole again (whole-GPU jobs may take it). The view is set
   * back to whole and re-filed in its node class (Engine.refile).
   */
  private wholeAgain(r: Running): void {
    for (const rep of r.replicas) {
      const view = this.engine.nodeById.get(rep.nodeId);
      if (!view) continue;
      let changed = false;
      for (const pg of rep.gpus) {
        const g = view.gpus.find((x) => x.id === pg.gpuId);
        if (g && g.mode === 'shared' && g.milliUsed === 0) {
          g.mode = 'whole';
          changed = true;
        }
      }
      if (!changed) continue;
      this.engine.refile(view);
    }
  }

  private setSm(i: number, v: number): void {
    const p = this.power[i]!;
    this.powerW += drawW(p, this.state[i]!, v) - drawW(p, this.state[i]!, this.sm[i]!);
    this.smTotal += v - this.sm[i]!;
    this.sm[i] = v;
  }

  private setState(i: number, s: PowerState): void {
    const p = this.power[i]!;
    const was = this.state[i]!;
    this.powerW += drawW(p, s, this.sm[i]!) - drawW(p, was, this.sm[i]!);
    const g = this.nodes[i]!.gpus;
    if (was === 'off' && s !== 'off') {
      this.gpusOn += g;
      this.memOn += g * p.gpuMemoryMiB;
    } else if (was !== 'off' && s === 'off') {
      this.gpusOn -= g;
      this.memOn -= g * p.gpuMemoryMiB;
    }
    // free GPUs counted for headroom: nodes on or booting
    const counts = (x: PowerState) => x === 'on' || x === 'powering-up';
    if (counts(was) && !counts(s)) this.freeWhole -= g;
    else if (!counts(was) && counts(s)) this.freeWhole += g;
    this.state[i] = s;
  }

  private finishTransition(i: number): void {
    if (this.state[i] === 'powering-down') this.setState(i, 'off');
    else if (this.state[i] === 'powering-up') {
      this.setState(i, 'on');
      this.emptySince[i] = this.t;
      this.idleTimers.push(this.t + this.pm!.idleSeconds, i);
      this.rebuild = true;
      this.dirty = true;
    }
  }

  // ---------------------------------------------------------------- power management

  private managePower(unfit: PlannerJob[]): void {
    const pm = this.pm!;
    // power up ahead of queued demand that fits nowhere on the nodes that are on
    if (unfit.length) {
      const booting = new Map<number, { cpu: number; mem: number; gpus: number }>();
      for (let i = 0; i < this.nodes.length; i++)
        if (this.state[i] === 'powering-up') booting.set(i, { cpu: this.nodes[i]!.cpuMilli, mem: this.nodes[i]!.memoryMiB, gpus: this.nodes[i]!.gpus });
      for (const j of unfit) {
        const r = j.request;
        const g = Math.ceil(shareOf(r));
        for (let k = 0; k < j.replicas; k++) {
          let found = false;
          for (const [i, room] of booting) {
            if (room.cpu >= r.cpuMilli && room.mem >= r.memoryMiB && room.gpus >= g && fitsEmpty(this.nodes[i]!, j)) {
              room.cpu -= r.cpuMilli;
              room.mem -= r.memoryMiB;
              room.gpus -= g;
              found = true;
              break;
            }
          }
          if (found) continue;
          const i = this.nodes.findIndex((n, x) => this.state[x] === 'off' && fitsEmpty(n, j));
          if (i < 0) break;
          this.setState(i, 'powering-up');
          this.powerUps++;
          this.transitions.push(this.t + pm.bootSeconds, i);
          booting.set(i, { cpu: this.nodes[i]!.cpuMilli - r.cpuMilli, mem: this.nodes[i]!.memoryMiB - r.memoryMiB, gpus: this.nodes[i]!.gpus - g });
        }
      }
    }
    if (this.idleReady.size === 0) return;
    const onPerModel = new Map<string, number>();
    this.nodes.forEach((n, i) => {
      if (this.state[i] === 'on' || this.state[i] === 'powering-up') onPerModel.set(n.model, (onPerModel.get(n.model) ?? 0) + 1);
    });
    // the latest nodes in the engine's order first: ties in scoring go to earlier nodes, so those fill first
    const candidates = [...this.idleReady].filter((i) => this.state[i] === 'on' && this.jobsOn[i] === 0).sort((a, b) => b - a);
    const down = choosePowerDowns(
      {
        candidates,
        gpus: (i) => this.nodes[i]!.gpus,
        model: (i) => this.nodes[i]!.model,
        freeGpus: this.freeWhole,
        queuedGpus: Math.max(0, this.queuedGpus),
        totalGpus: this.totalGpus,
        onPerModel,
      },
      pm.headroom,
    );
    for (const i of down) {
      this.idleReady.delete(i);
      this.setState(i, 'powering-down');
      this.powerDowns++;
      this.transitions.push(this.t + pm.shutdownSeconds, i);
    }
    if (down.length) this.rebuild = true;
  }

  /** A new engine over the current state with the powered-off nodes unschedulable (same node order, same learned mix). */
  private rebuildEngine(): void {
    this.rebuild = false;
    const nodes: NodeState[] = this.engine.nodes.map((v, i) => ({
      id: v.id,
      name: v.name,
      leaf: v.leaf,
      spine: v.spine,
      schedulable: this.state[i] === 'on',
      persona: v.persona,
      cpuMilli: v.cpuMilli,
      memoryMiB: v.memoryMiB,
      cpuMilliFree: v.cpuFree,
      memoryMiBFree: v.memFree,
      gpus: v.gpus.map((g) => ({
        id: g.id,
        index: g.index,
        model: g.model,
        nvlinkDomain: g.domain,
        healthy: true,
        schedulable: true,
        mode: g.mode === 'shared' && g.milliUsed === 0 ? ('whole' as const) : g.mode,
        allocated: g.allocated,
        sharedMilliUsed: g.milliUsed,
        mig: g.mig.map((s) => ({ ...s })),
      })),
    }));
    const snapshot: ClusterSnapshot = { nodes };
    this.engine = new Engine(snapshot, { profile: this.policy.profile, plugins: this.policy.plugins, history: [...this.history.values()] });
  }

  // ---------------------------------------------------------------- integration

  private advance(to: number): void {
    const from = this.t;
    if (to <= from) return;
    const dt = to - from;
    const s = this.totals;
    s.allocGpuS += this.alloc * dt;
    s.smGpuS += this.smTotal * dt;
    s.memMiBS += this.memNow * dt;
    s.gpusOnS += this.gpusOn * dt;
    s.memOnMiBS += this.memOn * dt;
    s.busyGpuS += this.busyGpus * dt;
    s.busyMemMiBS += this.busyMem * dt;
    s.energyJ += this.powerW * dt;
    const waiting = this.queuedGpus > 1e-9;
    if (waiting) {
      s.fragS += dt;
      s.fragGpuS += Math.max(0, this.gpusOn - this.alloc) * dt;
      s.fragOnGpuS += this.gpusOn * dt;
    }
    // buckets
    const w = this.bucketSeconds;
    let a = from;
    while (a < to) {
      const b = Math.floor(a / w);
      const end = Math.min(to, (b + 1) * w);
      const d = end - a;
      while (this.buckets.length <= b) this.buckets.push({ alloc: 0, sm: 0, mem: 0, gpusOn: 0, memOn: 0, energyJ: 0, queued: 0 });
      const k = this.buckets[b]!;
      k.alloc += this.alloc * d;
      k.sm += this.smTotal * d;
      k.mem += this.memNow * d;
      k.gpusOn += this.gpusOn * d;
      k.memOn += this.memOn * d;
      k.energyJ += this.powerW * d;
      k.queued += this.queue.length * d;
      a = end;
    }
    this.t = to;
  }
}
