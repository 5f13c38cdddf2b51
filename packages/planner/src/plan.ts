/**
 * A what-if plan: the same workload on the same cluster under several policies, side by side,
 * over one common horizon (the latest policy's last departure), with and without power
 * management, and the relative changes of Gantry against kubernetes-default.
 */
import { checkFeasible, type PlannerNode } from './cluster';
import { Problems } from './input-error';
import { POLICIES, policySetup, workloadShapes, type PolicyName } from './policies';
import { DEFAULT_POWER, type PowerOptions } from './power';
import { Replay, type ReplayHooks, type ReplayOutcome } from './replay';
import type { PlannerJob } from './workload';
import { mulberry32 } from './rng';

export interface PlanInput {
  nodes: PlannerNode[];
  jobs: PlannerJob[];
  policies: readonly string[];
  /** Power management for the policies that have it (not kubernetes-default); null: off for all. */
  power?: PowerOptions | null;
  /** Also replay each power-managed policy without power management (energy without it). Default true. */
  compareWithoutPower?: boolean;
  /** Seeded order of the nodes (the tie-break order every policy sees). */
  seed?: number;
  /** Points in the time series. */
  points?: number;
}

export interface SeriesPoint {
  /** Start of the bucket, seconds. */
  t: number;
  allocationPct: number;
  smUtilisationPct: number;
  memoryUsePct: number;
  powerKW: number;
  gpusOn: number;
  queued: number;
}

export interface PolicyResult {
  policy: PolicyName;
  powerManagement: boolean;
  jobs: number;
  placed: number;
  unplaced: number;
  /** Jobs no node of the cluster could ever hold (counted in unplaced). */
  neverFits: number;
  /** GPUs allocated (shares as fractions; a whole GPU under kubernetes-default) / GPUs powered, time-averaged. */
  gpuAllocationPct: number;
  /** SM work (each job uses its request) / GPUs powered, time-averaged. */
  gpuUtilisationPct: number;
  /** GPU memory used / GPU memory of the GPUs powered, time-averaged. */
  gpuMemoryUsePct: number;
  /** SM work / every GPU of the cluster (powered or not). */
  clusterSmUtilisationPct: number;
  /** SM work / GPUs holding at least one job ("bound" GPUs). */
  smPerBusyGpuPct: number;
  /** GPU memory used / memory of the GPUs holding at least one job. */
  memoryPerBusyGpuPct: number;
  energyKWh: number;
  /** Energy of the same replay with every node always on (null when not replayed). */
  energyWithoutPowerManagementKWh: number | null;
  waitP50Seconds: number;
  waitP95Seconds: number;
  waitMaxSeconds: number;
  /** Unallocated share of the powered GPUs while jobs wait (null: no job ever waited). */
  fragmentationPct: number | null;
  powerDowns: number;
  powerUps: number;
  series: SeriesPoint[];
  /** Wait-time histogram: upper bounds in seconds and counts. */
  waitHistogram: { le: number; count: number }[];
  cpuSeconds: number;
}

export interface PlanResult {
  horizonSeconds: number;
  nodes: number;
  gpus: number;
  jobs: number;
  power: PowerOptions | null;
  policies: PolicyResult[];
  /** Relative changes of gantry against kubernetes-default, percent (when both ran). */
  gantryVsKubernetesDefault: { gpuUtilisationPct: number; gpuMemoryUsePct: number; energyKWh: number } | null;
}

const WAIT_BOUNDS = [0, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, Infinity];

function percentile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[k]!;
}

const pct = (a: number, b: number) => (b > 0 ? round2((100 * a) / b) : 0);
const round2 = (x: number) => Math.round(x * 100) / 100;
const rel = (a: number, b: number) => (b !== 0 ? round2((100 * (a - b)) / b) : 0);

export interface PlanHooks extends ReplayHooks {
  /** Called with the share of the whole plan done (0..1) and the policy being replayed. */
  onPlanProgress?: (fraction: number, policy: PolicyName) => void;
}

export function validatePolicies(policies: readonly string[]): PolicyName[] {
  const p = new Problems('policies');
  if (!policies.length) p.add(null, 'policies', `choose at least one of ${POLICIES.join(', ')}`);
  policies.forEach((x, i) => {
    if (!(POLICIES as readonly string[]).includes(x)) p.add(i + 1, 'policies', `unknown policy ${JSON.stringify(x)} (known: ${POLICIES.join(', ')})`);
  });
  p.throwIfAny();
  return [...new Set(policies)] as PolicyName[];
}

export function runPlan(input: PlanInput, hooks: PlanHooks = {}): PlanResult {
  const policies = validatePolicies(input.policies);
  const jobs = input.jobs;
  const { neverFits } = checkFeasible(input.nodes, jobs);
  const power = input.power === undefined ? { ...DEFAULT_POWER } : input.power;
  const order = seededOrder(input.nodes, input.seed ?? 42);
  const shapes = workloadShapes(jobs);
  // GPUs carrying a MIG layout: the device plugin's mixed strategy advertises their slices to kube-scheduler too
  const migSlices = input.nodes.some((n) => n.migLayout?.length);
  const lastEnd = jobs.reduce((m, j) => Math.max(m, j.arrival + j.duration), 0);
  const bucketSeconds = Math.max(1, Math.ceil(lastEnd / (input.points ?? 200)));
  const runs: { policy: PolicyName; pm: boolean; replay: Replay; cpu: number }[] = [];
  const plan: { policy: PolicyName; pm: boolean }[] = [];
  for (const policy of policies) {
    const managed = policySetup(policy, shapes, { migSlices }).powerManaged && power !== null;
    plan.push({ policy, pm: managed });
    if (managed && input.compareWithoutPower !== false) plan.push({ policy, pm: false });
  }
  plan.forEach((p, k) => {
    const c0 = process.cpuUsage();
    const replay = new Replay(order, jobs, policySetup(p.policy, shapes, { migSlices }), p.pm ? power : null, bucketSeconds, {
      shouldStop: hooks.shouldStop,
      onProgress: (f) => hooks.onPlanProgress?.((k + f) / plan.length, p.policy),
    }).run();
    const c = process.cpuUsage(c0);
    runs.push({ policy: p.policy, pm: p.pm, replay, cpu: (c.user + c.system) / 1e6 });
    hooks.onPlanProgress?.((k + 1) / plan.length, p.policy);
  });
  const horizon = Math.max(lastEnd, ...runs.map((r) => r.replay.now));
  for (const r of runs) r.replay.extendTo(horizon);
  const results: PolicyResult[] = [];
  for (const policy of policies) {
    const main = runs.find((r) => r.policy === policy && r.pm === plan.find((p) => p.policy === policy)!.pm)!;
    const bare = runs.find((r) => r.policy === policy && !r.pm);
    results.push(
      summarise(
        policy,
        main.pm,
        main.replay.outcome(),
        bare ? bare.replay.outcome() : null,
        jobs.length,
        neverFits.length,
        main.cpu + (bare && bare !== main ? bare.cpu : 0),
      ),
    );
  }
  const g = results.find((r) => r.policy === 'gantry');
  const k = results.find((r) => r.policy === 'kubernetes-default');
  return {
    horizonSeconds: horizon,
    nodes: input.nodes.length,
    gpus: input.nodes.reduce((s, n) => s + n.gpus, 0),
    jobs: jobs.length,
    power,
    policies: results,
    gantryVsKubernetesDefault:
      g && k
        ? {
            gpuUtilisationPct: rel(g.gpuUtilisationPct, k.gpuUtilisationPct),
            gpuMemoryUsePct: rel(g.gpuMemoryUsePct, k.gpuMemoryUsePct),
            energyKWh: rel(g.energyKWh, k.energyKWh),
          }
        : null,
  };
}

function summarise(
  policy: PolicyName,
  pm: boolean,
  o: ReplayOutcome,
  bare: ReplayOutcome | null,
  jobs: number,
  neverFits: number,
  cpuSeconds: number,
): PolicyResult {
  const s = o.integrals;
  const waits = [...o.waits].sort((a, b) => a - b);
  const hist = WAIT_BOUNDS.map((le) => ({ le, count: 0 }));
  for (const w of waits) hist.find((h) => w <= h.le)!.count++;
  const series: SeriesPoint[] = o.buckets.map((b, i) => ({
    t: i * o.bucketSeconds,
    allocationPct: pct(b.alloc, b.gpusOn),
    smUtilisationPct: pct(b.sm, b.gpusOn),
    memoryUsePct: pct(b.mem, b.memOn),
    powerKW: round2(b.energyJ / o.bucketSeconds / 1000),
    gpusOn: round2(b.gpusOn / o.bucketSeconds),
    queued: round2(b.queued / o.bucketSeconds),
  }));
  const horizon = o.endTime;
  return {
    policy,
    powerManagement: pm,
    jobs,
    placed: o.placed,
    unplaced: o.unplaced,
    neverFits,
    gpuAllocationPct: pct(s.allocGpuS, s.gpusOnS),
    gpuUtilisationPct: pct(s.smGpuS, s.gpusOnS),
    gpuMemoryUsePct: pct(s.memMiBS, s.memOnMiBS),
    clusterSmUtilisationPct: pct(s.smGpuS, o.totalGpus * horizon),
    smPerBusyGpuPct: pct(s.smGpuS, s.busyGpuS),
    memoryPerBusyGpuPct: pct(s.memMiBS, s.busyMemMiBS),
    energyKWh: round2(s.energyJ / 3.6e6),
    energyWithoutPowerManagementKWh: bare ? round2(bare.integrals.energyJ / 3.6e6) : null,
    waitP50Seconds: round2(percentile(waits, 0.5)),
    waitP95Seconds: round2(percentile(waits, 0.95)),
    waitMaxSeconds: round2(waits.length ? waits[waits.length - 1]! : 0),
    fragmentationPct: s.fragS > 0 ? pct(s.fragGpuS, s.fragOnGpuS) : null,
    powerDowns: o.powerDowns,
    powerUps: o.powerUps,
    series,
    waitHistogram: hist.map((h) => ({ le: h.le === Infinity ? -1 : h.le, count: h.count })),
    cpuSeconds: round2(cpuSeconds),
  };
}

/** The nodes in a fixed random order per seed (mulberry32): ties between equal scores go to earlier nodes. */
export function seededOrder<T>(items: T[], seed: number): T[] {
  const rand = mulberry32(seed * 7919 + 1);
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}
