/**
 * Demand-driven MIG planning (pure, time passed in): what the node manager's loop runs over the
 * queue, and what `pnpm bench mig` runs in simulated time.
 *   1. Demand: pending slices and whole GPUs (jobs a cycle could not place, endpoint replicas),
 *      minus what changes in flight will serve (creditInFlight).
 *   2. The engine's MIG planner (free slices first, then free slots, then idle whole GPUs, then
 *      idle MIG GPUs back to full size for whole-GPU demand).
 *   3. Demand still unmet re-partitions idle MIG GPUs whose free slices nothing pending wants
 *      (a wave of 7g jobs on GPUs cut into idle 1g slices: the planner alone would leave it waiting).
 * The hold (no change for `holdMs` after the last one) only applies to GPUs that run work: an idle
 * GPU is free to re-partition for demand at once.
 */
import { planMigLayouts, type ClusterSnapshot, type GpuState, type MigChange, type MigPlan } from '@gantry/scheduler';
import { creditInFlight, migDemandOf, type MigInFlight, type PendingDemandRow } from './demand-planning';

export interface MigPlanningInput {
  snapshot: ClusterSnapshot;
  pending: PendingDemandRow[];
  inFlight: MigInFlight[];
  /** When each GPU's layout last changed (ms). */
  lastChangedAtMs: Record<string, number> | ReadonlyMap<string, number>;
  nowMs: number;
  holdMs: number;
}

export function planMigChanges(input: MigPlanningInput): MigPlan {
  const { migDemand, wholeDemand } = creditInFlight(migDemandOf(input.pending), input.inFlight);
  if (!migDemand.length && !wholeDemand.length) return { changes: [], unmet: [] };
  const plan = planMigLayouts({
    snapshot: input.snapshot,
    migDemand,
    wholeDemand,
    lastChangedAtMs: input.lastChangedAtMs,
    holdIdle: false,
    nowMs: input.nowMs,
    holdMs: input.holdMs,
  });
  if (!plan.unmet.length) return plan;

  // 3. idle MIG GPUs that the plan leaves alone and whose free slices no pending work wants,
  // offered to the unmet demand as if they were whole.
  const touched = new Set(plan.changes.map((c) => c.gpuId));
  const wanted = new Set(migDemand.map((d) => d.profile));
  const spare = new Set<string>();
  const idleMig = (g: GpuState) => g.mode === 'mig' && g.mig.every((s) => !s.busy) && !touched.has(g.id) && !g.mig.some((s) => wanted.has(s.profile));
  // Only nodes with such a GPU: the planner never uses a GPU out of placement, so a node with none
  // offers nothing (at 10,000 nodes, a copy of every node on each tick with unmet demand).
  const snapshot: ClusterSnapshot = { nodes: [] };
  for (const n of input.snapshot.nodes) {
    if (!n.gpus.some(idleMig)) continue;
    snapshot.nodes.push({
      ...n,
      gpus: n.gpus.map((g) => {
        if (!idleMig(g)) return { ...g, schedulable: false };
        spare.add(g.id);
        return { ...g, mode: 'whole' as const, mig: [] };
      }),
    });
  }
  if (!spare.size) return plan;
  const again = planMigLayouts({ snapshot, migDemand: plan.unmet, nowMs: input.nowMs, holdMs: input.holdMs });
  const extra: MigChange[] = again.changes.filter((c) => spare.has(c.gpuId)).map((c) => ({ ...c, action: 'partition' }));
  return { changes: [...plan.changes, ...extra], unmet: again.unmet };
}
