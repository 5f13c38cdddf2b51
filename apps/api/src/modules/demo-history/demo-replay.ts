/**
 * The demo's past, played through the scheduling engine: the synthetic jobs (demo-week.ts)
 * arrive on the cluster's real inventory, wait for their team's quota and for room, are placed
 * by the worker's engine (@gantry/scheduler, through the planner's discrete-event Replay), run
 * and leave. A job a GPU fault takes away is submitted again for the rest of its work, as the
 * failover loop reschedules it. Pure: nodes and jobs in, runs out (seconds from the start).
 */
import { migSliceFraction } from '@gantry/contracts';
import { policySetup, Replay, workloadShapes, type MigLayoutEntry, type PlannerJob, type PlannerNode } from '@gantry/planner';
import type { ReplicaPlacement } from '@gantry/scheduler';
import type { DemoJob } from './demo-week';

export interface ReplayGpu {
  id: string;
  index: number;
  model: string;
}

export interface ReplayNode {
  id: string;
  name: string;
  leaf: string;
  spine: string;
  cpuMilli: number;
  memoryMiB: number;
  gpus: ReplayGpu[];
  /** The MIG layout the node's GPUs carry in the replay (absent: whole GPUs). */
  migLayout?: MigLayoutEntry[];
}

/** One stretch a job held GPUs: placed at `start`, released at `end` (seconds from the start). */
export interface DemoRun {
  job: DemoJob;
  start: number;
  end: number;
  /** Placements with the inventory's GPU ids. */
  replicas: ReplicaPlacement[];
  /** How the run ended: its work done, a GPU fault (rescheduled), or the replay's horizon. */
  ending: 'done' | 'fault' | 'horizon';
}

export interface QuotaLimits {
  /** GPU units a team may hold (its `*` quota's limit). */
  team: ReadonlyMap<string, number>;
  /** GPU units a tenant may hold (its GPU total; absent: unbounded). */
  tenant: ReadonlyMap<string, number>;
}

/** GPU units one replica of a request holds (quota units: whole GPUs, shares, MIG compute slices / 7). */
function unitsOf(job: PlannerJob, model: string | undefined): number {
  const r = job.request;
  if (r.gpus) return r.gpus;
  if (r.gpuMilli) return r.gpuMilli / 1000;
  if (r.migProfile) return migSliceFraction(r.migProfile, model) ?? 1 / 7;
  return 0;
}

/** Simulated seconds replayed between two yields to the event loop (the worker's other work goes on). */
const SLICE_SECONDS = 1800;

/** Lets the event loop run (timers, I/O, lock renewals) between slices of CPU work. */
export const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * Replays `jobs` on `nodes` up to `horizon` and returns the runs that began before it; a run
 * still going at the horizon ends there (`ending: 'horizon'`).
 */
export async function replayDemo(nodes: readonly ReplayNode[], jobs: readonly DemoJob[], limits: QuotaLimits, horizon: number): Promise<DemoRun[]> {
  const plannerNodes: PlannerNode[] = nodes.map((n) => ({
    id: n.id,
    model: n.gpus[0]?.model ?? '',
    gpus: n.gpus.length,
    cpuMilli: n.cpuMilli,
    memoryMiB: n.memoryMiB,
    leaf: n.leaf,
    spine: n.spine,
    ...(n.migLayout?.length ? { migLayout: n.migLayout } : {}),
  }));
  // The engine names a node's GPUs `<nodeId>/gpu<i>` (planner nodeState): back to the inventory's ids.
  const gpuIds = new Map<string, string>(nodes.flatMap((n) => n.gpus.map((g, i) => [`${n.id}/gpu${i}`, g.id] as const)));
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const tenantOf = new Map(jobs.map((j) => [j.teamId, j.tenantId]));
  const teamHeld = new Map<string, number>();
  const tenantHeld = new Map<string, number>();
  const modelOf = (j: PlannerJob) => j.request.gpuModels?.[0];
  const hold = (j: PlannerJob, sign: 1 | -1) => {
    const units = unitsOf(j, modelOf(j)) * j.replicas * sign;
    const tenant = tenantOf.get(j.teamId)!;
    teamHeld.set(j.teamId, (teamHeld.get(j.teamId) ?? 0) + units);
    tenantHeld.set(tenant, (tenantHeld.get(tenant) ?? 0) + units);
  };
  const EPS = 1e-6;
  const admit = (j: PlannerJob) => {
    const units = unitsOf(j, modelOf(j)) * j.replicas;
    const tenant = tenantOf.get(j.teamId)!;
    const teamLimit = limits.team.get(j.teamId) ?? Infinity;
    const tenantLimit = limits.tenant.get(tenant) ?? Infinity;
    return (teamHeld.get(j.teamId) ?? 0) + units <= teamLimit + EPS && (tenantHeld.get(tenant) ?? 0) + units <= tenantLimit + EPS;
  };

  const runs: DemoRun[] = [];
  const open = new Map<PlannerJob, { start: number; replicas: ReplicaPlacement[] }>();
  const faulted = new Set<string>();
  // A job with a fault runs first only until the fault.
  const workload: PlannerJob[] = jobs.map((j) => (j.faultAfter !== undefined ? { ...j, duration: j.faultAfter } : j));
  const replay: Replay = new Replay(
    plannerNodes,
    workload,
    policySetup('gantry', workloadShapes(workload), { migSlices: plannerNodes.some((n) => n.migLayout) }),
    null,
    3600,
    {
      admit,
      onStart: (j, replicas, t) => {
        hold(j, 1);
        const mapped = replicas.map((r) => ({ ...r, gpus: r.gpus.map((g) => ({ ...g, gpuId: gpuIds.get(g.gpuId)! })) }));
        open.set(j, { start: t, replicas: mapped });
      },
      onEnd: (j, _replicas, t) => {
        hold(j, -1);
        const o = open.get(j)!;
        open.delete(j);
        const job = byId.get(j.id)!;
        const fault = job.faultAfter !== undefined && !faulted.has(job.id);
        runs.push({ job, start: o.start, end: t, replicas: o.replicas, ending: fault ? 'fault' : 'done' });
        if (fault) {
          faulted.add(job.id);
          // rescheduled: the rest of its work, from now (no checkpoint survives a fallen-off GPU: its progress does, as the job's progressSeconds)
          replay.submit({ ...j, arrival: t, duration: Math.max(1, job.duration - job.faultAfter!) });
        }
      },
    },
  );
  for (let t = 0; t < horizon;) {
    t = Math.min(horizon, t + SLICE_SECONDS);
    replay.run(t);
    await yieldToEventLoop();
  }
  for (const [j, o] of open) if (o.start < horizon) runs.push({ job: byId.get(j.id)!, start: o.start, end: horizon, replicas: o.replicas, ending: 'horizon' });
  return runs.filter((r) => r.start < horizon).sort((a, b) => a.start - b.start || (a.job.id < b.job.id ? -1 : 1));
}
