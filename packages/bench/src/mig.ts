/**
 * Demand-driven MIG against static layouts, in simulated time:
 *
 *   pnpm --silent bench mig [--gpus 64] [--seed 42] [--json]
 *
 * A cluster of H100-80GB nodes (8 GPUs each) runs a stream of jobs through the worker's own
 * pieces: the engine's `runCycle` places pending work after every event (an arrival, an exit, a
 * MIG change applied), and, for `demandDriven`, the node manager's `planMigChanges` (the worker's
 * MIG planning: demand, the engine's MIG planner, the hold) runs after each cycle that left MIG
 * work waiting; a change takes the GPU out of placement for MIG_APPLY_SECONDS (the simulated
 * driver's default, 5 s). Policies:
 *   - demandDriven: GPUs start whole; layouts follow the queue;
 *   - staticBalanced: every GPU carries NVIDIA's `all-balanced` layout (2 x 1g.10gb, 2g.20gb, 3g.40gb) for good;
 *   - noMig: every GPU whole; a slice request takes a whole GPU;
 *   - the best static partition (MISO's baseline): a share of the GPUs (0, 25, 50, 75, 100%) on
 *     all-balanced, the rest whole, the one with the lowest mean wait that starves no class.
 * Under a static layout a slice request the layout does not have (4g, 7g) runs on a whole GPU.
 * Scenarios: `stream-then-wave` (1g jobs, then a wave of 7g jobs), `day-night` (inference slices
 * by day, 8-GPU training at night), `random` (a random mix of slices and whole-GPU jobs).
 * Figures per policy: mean and p95 wait (arrival to start, simulated seconds) of the jobs that
 * started, jobs never started before the end (a starved class), and GPU utilisation (compute
 * the jobs asked for, a 1g job being 1/7 of a GPU wherever it runs, over the GPUs' time until
 * the last job of the scenario ended or the horizon).
 */
import { runCycle, migProfile, type ClusterSnapshot, type GpuState, type NodeState, type PendingJob } from '@gantry/scheduler';
import { planMigChanges, PLAN_HOLD_SIM_SECONDS } from '@gantry/api/bench-support';
import { Rng } from './rng';
import { percentile } from './waiting';

export const MIG_APPLY_SECONDS = 5;
const MODEL = 'H100-80GB';
const ALL_BALANCED = [
  { profile: '2g.20gb', start: 0 },
  { profile: '1g.10gb', start: 2 },
  { profile: '1g.10gb', start: 3 },
  { profile: '3g.40gb', start: 4 },
];

export type MigPolicy = 'demandDriven' | 'staticBalanced' | 'noMig';
export const MIG_POLICIES: MigPolicy[] = ['demandDriven', 'staticBalanced', 'noMig'];

export interface SimJob {
  id: string;
  /** Job class (for starvation per class). */
  cls: string;
  arrival: number;
  duration: number;
  migProfile?: string;
  gpus?: number;
}

export interface PolicyFigures {
  meanWaitSeconds: number;
  p95WaitSeconds: number;
  gpuUtilisation: number;
  started: number;
  /** Jobs that never started before the horizon (per class when any). */
  starved: number;
  starvedClasses: string[];
  migChanges: number;
}

/** Compute share of one GPU a job asks for (a 1g slice is 1/7 of an H100, wherever it runs). */
function computeOf(j: SimJob): number {
  if (j.migProfile) return (migProfile(MODEL, j.migProfile)?.compute ?? 7) / 7;
  return j.gpus ?? 1;
}

/** `balancedShare`: the share of GPUs carrying all-balanced for good (1 for staticBalanced, 0 otherwise; a static mix between). */
function cluster(gpus: number, policy: MigPolicy, balancedShare: number): ClusterSnapshot {
  const nodes: NodeState[] = [];
  for (let n = 0; n * 8 < gpus; n++) {
    const gs: GpuState[] = [];
    for (let i = 0; i < 8 && n * 8 + i < gpus; i++) {
      const balanced = policy === 'staticBalanced' && n * 8 + i < Math.round(gpus * balancedShare);
      const mig = balanced ? ALL_BALANCED.map((e) => ({ ...e, size: migProfile(MODEL, e.profile)!.size, busy: false })) : [];
      gs.push({
        id: `n${n}/g${i}`,
        index: i,
        model: MODEL,
        nvlinkDomain: 0,
        healthy: true,
        schedulable: true,
        mode: mig.length ? 'mig' : 'whole',
        allocated: false,
        sharedMilliUsed: 0,
        mig,
      });
    }
    nodes.push({
      id: `n${n}`,
      name: `h100-n${n}`,
      leaf: `leaf-${Math.floor(n / 4)}`,
      spine: 'spine-0',
      schedulable: true,
      persona: 'container',
      cpuMilli: 128_000,
      memoryMiB: 1_048_576,
      cpuMilliFree: 128_000,
      memoryMiBFree: 1_048_576,
      gpus: gs,
    });
  }
  return { nodes };
}

/** Runs one policy over one job list in simulated time (seconds). */
export function simulateMig(jobs: readonly SimJob[], policy: MigPolicy, o: { gpus: number; horizon: number; balancedShare?: number }): PolicyFigures {
  const snap = cluster(o.gpus, policy, o.balancedShare ?? 1);
  const gpuById = new Map<string, GpuState>();
  for (const n of snap.nodes) for (const g of n.gpus) gpuById.set(g.id, g);
  const arrivals = [...jobs].sort((a, b) => a.arrival - b.arrival);
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const pending: SimJob[] = [];
  const running: { job: SimJob; end: number; gpus: { gpuId: string; migStart?: number }[] }[] = [];
  const changes: { gpuId: string; layout: { profile: string; start: number }[]; at: number }[] = [];
  const lastChangedAtMs: Record<string, number> = {};
  const waits: number[] = [];
  let next = 0;
  let now = 0;
  let work = 0;
  let lastEnd = 0;
  let migChanges = 0;
  const asPending = (j: SimJob): PendingJob => {
    // a static layout serves the profiles it has; any other slice request (4g, 7g) runs on a whole GPU
    const slice = j.migProfile && (policy === 'demandDriven' || (policy === 'staticBalanced' && ALL_BALANCED.some((e) => e.profile === j.migProfile)));
    return {
      id: j.id,
      teamId: j.cls,
      priority: 0,
      createdAtMs: j.arrival * 1000,
      replicas: 1,
      request: { ...(slice ? { migProfile: j.migProfile } : { gpus: j.gpus ?? 1 }), cpuMilli: 1000, memoryMiB: 4096 },
      topology: { level: 'any', required: false },
    };
  };
  for (;;) {
    const t = Math.min(arrivals[next]?.arrival ?? Infinity, ...running.map((r) => r.end), ...changes.map((c) => c.at));
    if (t === Infinity || t > o.horizon) break;
    now = t;
    // exits
    for (let i = running.length - 1; i >= 0; i--) {
      const r = running[i]!;
      if (r.end > now) continue;
      running.splice(i, 1);
      lastEnd = Math.max(lastEnd, r.end);
      for (const p of r.gpus) {
        const g = gpuById.get(p.gpuId)!;
        if (p.migStart !== undefined) g.mig.find((s) => s.start === p.migStart)!.busy = false;
        else g.allocated = false;
      }
    }
    // MIG changes applied
    for (let i = changes.length - 1; i >= 0; i--) {
      const c = changes[i]!;
      if (c.at > now) continue;
      changes.splice(i, 1);
      const g = gpuById.get(c.gpuId)!;
      const busy = new Set(g.mig.filter((s) => s.busy).map((s) => s.start));
      g.mig = c.layout.map((e) => ({ ...e, size: migProfile(MODEL, e.profile)!.size, busy: busy.has(e.start) }));
      g.mode = c.layout.length ? 'mig' : 'whole';
      g.schedulable = true;
      lastChangedAtMs[g.id] = now * 1000;
    }
    // arrivals
    while (next < arrivals.length && arrivals[next]!.arrival <= now) pending.push(arrivals[next++]!);
    if (!pending.length) continue;
    // the cycle: the engine places what fits
    const decision = runCycle(snap, pending.map(asPending));
    for (const p of decision.placed) {
      const job = byId.get(p.jobId)!;
      const gpus = p.replicas.flatMap((r) => r.gpus.map((g) => ({ gpuId: g.gpuId, migStart: g.migStart })));
      for (const x of gpus) {
        const g = gpuById.get(x.gpuId)!;
        if (x.migStart !== undefined) g.mig.find((s) => s.start === x.migStart)!.busy = true;
        else g.allocated = true;
      }
      running.push({ job, end: now + job.duration, gpus });
      waits.push(now - job.arrival);
      work += computeOf(job) * Math.min(job.duration, o.horizon - now);
      pending.splice(pending.indexOf(job), 1);
    }
    // demand-driven MIG: the worker's planning over what is still waiting
    if (policy !== 'demandDriven' || !pending.length) continue;
    const inFlight = changes.map((c) => {
      const g = gpuById.get(c.gpuId)!;
      return { model: MODEL, target: c.layout, busyStarts: new Set(g.mig.filter((s) => s.busy).map((s) => s.start)) };
    });
    const plan = planMigChanges({
      snapshot: snap,
      pending: pending.map((j) => ({ kind: 'batch', replicas: 1, resources: j.migProfile ? { migProfile: j.migProfile } : { gpus: j.gpus ?? 1 } })),
      inFlight,
      lastChangedAtMs,
      nowMs: now * 1000,
      holdMs: PLAN_HOLD_SIM_SECONDS * 1000,
    });
    for (const c of plan.changes) {
      const g = gpuById.get(c.gpuId)!;
      // the MIG manager waits for slices that go away to be idle; the planner proposes none that are busy
      if (g.allocated || g.mig.some((s) => s.busy && !c.layout.some((e) => e.start === s.start && e.profile === s.profile))) continue;
      g.schedulable = false;
      changes.push({ gpuId: c.gpuId, layout: c.layout, at: now + MIG_APPLY_SECONDS });
      migChanges++;
    }
  }
  const end = Math.min(o.horizon, Math.max(lastEnd, ...running.map((r) => r.end)));
  const sorted = [...waits].sort((a, b) => a - b);
  const starvedJobs = [...pending, ...arrivals.slice(next)].filter((j) => j.arrival <= o.horizon);
  return {
    meanWaitSeconds: round(waits.reduce((a, b) => a + b, 0) / (waits.length || 1)),
    p95WaitSeconds: round(percentile(sorted, 95)),
    gpuUtilisation: round(work / (o.gpus * (end || 1)), 4),
    started: waits.length,
    starved: starvedJobs.length,
    starvedClasses: [...new Set(starvedJobs.map((j) => j.cls))].sort(),
    migChanges,
  };
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const exp = (rng: Rng, mean: number) => -Math.log(1 - rng.next()) * mean;

/** 1g jobs arriving for 10 minutes, then a wave of 7g jobs while the 1g jobs still run. */
export function streamThenWave(rng: Rng, gpus: number): SimJob[] {
  const jobs: SimJob[] = [];
  let t = 0;
  const rate = (gpus * 7 * 0.6) / 900; // 1g jobs of 15 min mean: about 60% of the slices in use at the peak
  while (t < 600) {
    t += exp(rng, 1 / rate);
    jobs.push({ id: `s${jobs.length}`, cls: 'stream-1g', arrival: t, duration: exp(rng, 900), migProfile: '1g.10gb' });
  }
  for (let i = 0; i < Math.round(gpus * 0.6); i++) {
    jobs.push({ id: `w${i}`, cls: 'wave-7g', arrival: 600 + exp(rng, 10), duration: 1200 + exp(rng, 600), migProfile: '7g.80gb' });
  }
  return jobs;
}

/** Two days: by day (8 h) inference replicas on 1g/2g/3g slices, at night (8 h) 8-GPU training; evenings mixed. */
export function dayNight(rng: Rng, gpus: number): SimJob[] {
  const jobs: SimJob[] = [];
  const profiles = ['1g.10gb', '1g.10gb', '2g.20gb', '3g.40gb'];
  for (let day = 0; day < 2; day++) {
    const d0 = day * 86_400;
    let t = d0;
    // by day: inference, about 70% of the cluster's compute at the peak
    const dayRate = (gpus * 0.7) / (3600 * (2.5 / 7));
    while (t < d0 + 8 * 3600) {
      t += exp(rng, 1 / dayRate);
      jobs.push({ id: `d${jobs.length}`, cls: 'day-inference', arrival: t, duration: exp(rng, 3600), migProfile: profiles[rng.int(profiles.length)] });
    }
    // at night: 8-GPU training, about 80% of the nodes at the peak
    t = d0 + 12 * 3600;
    const nightRate = ((gpus / 8) * 0.8) / (4 * 3600);
    while (t < d0 + 20 * 3600) {
      t += exp(rng, 1 / nightRate);
      jobs.push({ id: `n${jobs.length}`, cls: 'night-training', arrival: t, duration: 2 * 3600 + exp(rng, 2 * 3600), gpus: 8 });
    }
  }
  return jobs;
}

/** Six hours of a random mix: every MIG profile of an H100 and 1, 2, 4 or 8 whole GPUs. */
export function randomMix(rng: Rng, gpus: number): SimJob[] {
  const shapes: { cls: string; migProfile?: string; gpus?: number; w: number }[] = [
    { cls: '1g', migProfile: '1g.10gb', w: 30 },
    { cls: '2g', migProfile: '2g.20gb', w: 15 },
    { cls: '3g', migProfile: '3g.40gb', w: 15 },
    { cls: '4g', migProfile: '4g.40gb', w: 5 },
    { cls: '7g', migProfile: '7g.80gb', w: 5 },
    { cls: 'gpu1', gpus: 1, w: 15 },
    { cls: 'gpu2', gpus: 2, w: 7 },
    { cls: 'gpu4', gpus: 4, w: 5 },
    { cls: 'gpu8', gpus: 8, w: 3 },
  ];
  const total = shapes.reduce((a, s) => a + s.w, 0);
  const meanCompute = shapes.reduce((a, s) => a + (s.w / total) * (s.migProfile ? migProfile(MODEL, s.migProfile)!.compute / 7 : s.gpus!), 0);
  const rate = (gpus * 0.75) / (meanCompute * 1800);
  const jobs: SimJob[] = [];
  let t = 0;
  while (t < 6 * 3600) {
    t += exp(rng, 1 / rate);
    let pick = rng.next() * total;
    const s = shapes.find((x) => (pick -= x.w) < 0) ?? shapes[0]!;
    jobs.push({ id: `r${jobs.length}`, cls: s.cls, arrival: t, duration: exp(rng, 1800), ...(s.migProfile ? { migProfile: s.migProfile } : { gpus: s.gpus }) });
  }
  return jobs;
}

export const MIG_SCENARIOS = {
  'stream-then-wave': { make: streamThenWave, horizon: 6 * 3600 },
  'day-night': { make: dayNight, horizon: 2 * 86_400 + 12 * 3600 },
  random: { make: randomMix, horizon: 12 * 3600 },
} as const;

export interface MigBenchReport {
  bench: 'mig';
  gpus: number;
  seed: number;
  scenarios: Record<string, Record<MigPolicy, PolicyFigures> & { jobs: number; bestStatic: BestStatic; cutVsBestStaticPct: number | null }>;
  demandDriven: PolicyFigures;
  staticBalanced: PolicyFigures;
  noMig: PolicyFigures;
}

/** The static layout (a share of GPUs on all-balanced, the rest whole) with the lowest mean wait that starves no class. */
export interface BestStatic {
  balancedShare: number;
  meanWaitSeconds: number;
  p95WaitSeconds: number;
  gpuUtilisation: number;
}

export const STATIC_SHARES = [0, 0.25, 0.5, 0.75, 1];

/** Every scenario under every policy; the top-level figures are the stream-then-wave scenario the issue names. */
export function runMigBench(o: { gpus: number; seed: number }, log: (s: string) => void): MigBenchReport {
  const scenarios = {} as MigBenchReport['scenarios'];
  for (const [name, s] of Object.entries(MIG_SCENARIOS)) {
    const jobs = s.make(new Rng(o.seed), o.gpus);
    const row = { jobs: jobs.length } as MigBenchReport['scenarios'][string];
    for (const p of MIG_POLICIES) {
      const t0 = performance.now();
      row[p] = simulateMig(jobs, p, { gpus: o.gpus, horizon: s.horizon });
      const f = row[p];
      log(
        `${name} ${p}: mean wait ${f.meanWaitSeconds} s, p95 ${f.p95WaitSeconds} s, utilisation ${(f.gpuUtilisation * 100).toFixed(1)}%, ${f.started} started, ${f.starved} starved${f.starved ? ` (${f.starvedClasses.join(', ')})` : ''}, ${f.migChanges} MIG changes (${Math.round(performance.now() - t0)} ms CPU)`,
      );
    }
    // the best static partition (MISO's baseline): every share of all-balanced GPUs, whole GPUs for the rest
    let best: BestStatic | null = null;
    for (const share of STATIC_SHARES) {
      const f =
        share === 0
          ? row.noMig
          : share === 1
            ? row.staticBalanced
            : simulateMig(jobs, 'staticBalanced', { gpus: o.gpus, horizon: s.horizon, balancedShare: share });
      if (f.starved) continue;
      if (!best || f.meanWaitSeconds < best.meanWaitSeconds)
        best = { balancedShare: share, meanWaitSeconds: f.meanWaitSeconds, p95WaitSeconds: f.p95WaitSeconds, gpuUtilisation: f.gpuUtilisation };
    }
    row.bestStatic = best ?? {
      balancedShare: 0,
      meanWaitSeconds: row.noMig.meanWaitSeconds,
      p95WaitSeconds: row.noMig.p95WaitSeconds,
      gpuUtilisation: row.noMig.gpuUtilisation,
    };
    row.cutVsBestStaticPct =
      row.bestStatic.meanWaitSeconds > 0
        ? round((100 * (row.bestStatic.meanWaitSeconds - row.demandDriven.meanWaitSeconds)) / row.bestStatic.meanWaitSeconds)
        : null;
    log(
      `${name}: best static partition ${row.bestStatic.balancedShare * 100}% all-balanced (mean wait ${row.bestStatic.meanWaitSeconds} s); demand-driven cuts mean wait by ${row.cutVsBestStaticPct}%`,
    );
    scenarios[name] = row;
  }
  const main = scenarios['stream-then-wave']!;
  return { bench: 'mig', gpus: o.gpus, seed: o.seed, scenarios, demandDriven: main.demandDriven, staticBalanced: main.staticBalanced, noMig: main.noMig };
}

export function migCommand(opts: Record<string, string>, log: (s: string) => void): void {
  const r = runMigBench({ gpus: Number(opts.gpus ?? 64), seed: Number(opts.seed ?? 42) }, log);
  process.stdout.write(JSON.stringify(r) + '\n');
}
