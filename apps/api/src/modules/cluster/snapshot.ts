import type { ClusterSnapshot, GpuState, NodeState, PendingJob } from '@gantry/scheduler';
import { PRIORITY_VALUE, type JobResources, type TopologyLevel } from '@gantry/contracts';
import type { NodeRow } from './cluster.repository';
import { personaToApi } from './cluster.presenter';
import { markForeignUse, type ForeignGpuUseByNode } from './foreign-gpu-use';

/**
 * Step 1 of the cycle: the engine's in-memory view of the cluster, from Postgres rows, with the
 * GPUs that workloads Gantry did not start hold (`foreign`, from the driver) taken.
 *
 * A node's state is derived once per row and kept with it (the worker's snapshot replaces only
 * the rows of changed nodes, so a cycle at 10,000 nodes derives the few hundred that changed):
 * until the earliest start refusal on the node ends, and only for nodes that hold none of the
 * `without` jobs. The states are shared between calls: nothing may change them in place (the
 * engine works on its own views of them; `markForeignUse` copies the nodes it marks).
 */
export function buildSnapshot(
  nodes: readonly NodeRow[],
  without?: ReadonlySet<string>,
  nowMs = Date.now(),
  foreign?: ForeignGpuUseByNode,
  /** The ids of the nodes that hold `without` jobs, when the caller knows them (a what-if: no pass over every GPU's allocations). */
  holders?: ReadonlySet<string>,
): ClusterSnapshot {
  const leaves = (n: NodeRow) => (holders ? holders.has(n.id) : holdsAnyOf(n, without!));
  const snapshot = { nodes: nodes.map((n) => (without?.size && leaves(n) ? nodeState(n, without, nowMs) : keptNodeState(n, nowMs))) };
  return foreign ? markForeignUse(snapshot, foreign) : snapshot;
}

/**
 * Derives the node states of `nodes` ahead of the first cycle that needs them (worker boot, after
 * the inventory sync), a slice at a time with the event loop free between slices: at 10,000
 * nodes the first cycle after a restart spent about a second deriving them all. Each state is
 * kept with its row, so that cycle finds them.
 */
export async function deriveAhead(nodes: readonly NodeRow[], sliceSize = 500): Promise<void> {
  for (let i = 0; i < nodes.length; i += sliceSize) {
    const nowMs = Date.now();
    for (const n of nodes.slice(i, i + sliceSize)) keptNodeState(n, nowMs);
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * Derived node states, by the row they were derived from; `fromMs` to `untilMs`: when it holds
 * (between the start refusals on the node that end around the time it was derived: a caller
 * whose clock was read a moment before another's, like the node manager's tick, finds it too).
 */
const derived = new WeakMap<NodeRow, { state: NodeState; fromMs: number; untilMs: number }>();

function keptNodeState(n: NodeRow, nowMs: number): NodeState {
  const kept = derived.get(n);
  if (kept && kept.fromMs <= nowMs && nowMs < kept.untilMs) return kept.state;
  const state = nodeState(n, undefined, nowMs);
  derived.set(n, { state, fromMs: lastRefusalEnd(n, nowMs), untilMs: nextRefusalEnd(n, nowMs) });
  return state;
}

/** When the latest start refusal on the node that is over at `nowMs` ended; -Infinity without one (a state holds back to then). */
function lastRefusalEnd(n: NodeRow, nowMs: number): number {
  let end = -Infinity;
  for (const g of n.gpus) {
    const until = g.startRefusedUntil?.getTime();
    if (until !== undefined && until <= nowMs && until > end) end = until;
  }
  return end;
}

/** When the earliest start refusal still running on the node ends (a GPU becomes schedulable); Infinity without one. */
function nextRefusalEnd(n: NodeRow, nowMs: number): number {
  let end = Infinity;
  for (const g of n.gpus) {
    const until = g.startRefusedUntil?.getTime();
    if (until !== undefined && until > nowMs && until < end) end = until;
  }
  return end;
}

function holdsAnyOf(n: NodeRow, jobs: ReadonlySet<string>): boolean {
  return n.gpus.some((g) => g.allocations.some((a) => a.jobId !== null && jobs.has(a.jobId)));
}

/** `without`: jobs whose allocations are left out ("what if these were preempted"). */
function nodeState(n: NodeRow, without: ReadonlySet<string> | undefined, nowMs: number): NodeState {
  let cpuUsed = 0;
  let memUsed = 0;
  const gpus: GpuState[] = n.gpus.map((gpu) => {
    const g = without?.size ? { ...gpu, allocations: gpu.allocations.filter((a) => !a.jobId || !without.has(a.jobId)) } : gpu;
    for (const a of g.allocations) {
      cpuUsed += a.cpuMilli;
      memUsed += a.memoryMiB;
    }
    return {
      id: g.id,
      index: g.index,
      model: g.model,
      nvlinkDomain: g.nvlinkDomain,
      healthy: g.health === 'healthy',
      // out of placement while a MIG change is applied, or while the cluster's refusal to start work on it is held
      schedulable: g.schedulable && !(g.startRefusedUntil && g.startRefusedUntil.getTime() > nowMs),
      mode: g.mode,
      allocated: g.mode === 'whole' && g.allocations.length > 0,
      sharedMilliUsed: g.mode === 'shared' ? g.allocations.reduce((s, a) => s + a.milli, 0) : 0,
      mig: g.instances.map((i) => ({
        profile: i.profile,
        start: i.start,
        size: i.size,
        busy: g.allocations.some((a) => a.migStart === i.start),
      })),
    };
  });
  return {
    id: n.id,
    name: n.name,
    leaf: n.leaf.name,
    spine: n.leaf.spine.name,
    // off and powering nodes take no work (power management); a node a bare-metal lease holds is out of
    // the container and VM pool (docs/bare-metal.md)
    schedulable: n.state === 'ready' && n.powerState === 'on' && n.bareMetalLeaseId === null,
    persona: personaToApi(n.persona),
    cpuMilli: n.cpuMilli,
    memoryMiB: n.memoryMiB,
    cpuMilliFree: n.cpuMilli - cpuUsed,
    memoryMiBFree: n.memoryMiB - memUsed,
    gpus,
  };
}

export interface PendingRow {
  id: string;
  teamId: string;
  kind: string;
  priority: keyof typeof PRIORITY_VALUE;
  createdAt: Date;
  replicas: number;
  resources: unknown;
  topologyLevel: string;
  topologyRequired: boolean;
}

/** A pending job as the engine sees it. */
export function pendingJob(row: PendingRow): PendingJob {
  const r = row.resources as JobResources;
  return {
    id: row.id,
    teamId: row.teamId,
    priority: PRIORITY_VALUE[row.priority],
    createdAtMs: row.createdAt.getTime(),
    replicas: row.replicas,
    request: {
      ...(r.gpus !== undefined ? { gpus: r.gpus } : {}),
      ...(r.migProfile !== undefined ? { migProfile: r.migProfile } : {}),
      ...(r.gpuFraction !== undefined ? { gpuMilli: Math.round(r.gpuFraction * 1000) } : {}),
      ...(r.gpuModel ? { gpuModels: [r.gpuModel] } : {}),
      cpuMilli: r.cpuMilli,
      memoryMiB: r.memoryMiB,
    },
    topology: { level: row.topologyLevel as TopologyLevel, required: row.topologyRequired },
    persona: row.kind === 'vm' ? 'vm-passthrough' : 'container',
  };
}
