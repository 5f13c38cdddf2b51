/**
 * Power management of the live cluster (pure; time is passed in): the node manager's view of
 * its nodes turned into the shared rule of @gantry/scheduler (power.ts), which the what-if
 * planner's replays use too. Up: queued replicas that fit on no node that is on (or booting)
 * boot an off node, looking ahead in the queue like the persona planner. Down: nodes empty for
 * idleMs, while the GPUs left free cover the queue plus the headroom, one node per model kept on.
 */
import type { JobResources } from '@gantry/contracts';
import { choosePowerDowns, choosePowerUps, type PowerState, type QueuedReplicas } from '@gantry/scheduler';

export interface PowerNode {
  id: string;
  /** Operational state: only `ready` nodes are booted for demand or powered down by the policy. */
  state: 'ready' | 'cordoned' | 'draining' | 'switching' | 'down';
  powerState: PowerState;
  gpuModel: string | null;
  gpuCount: number;
  /** Healthy GPUs without any allocation. */
  gpusFree: number;
  /** Allocations on the node (a node holding work never powers down). */
  allocations: number;
  /** Since when the node holds nothing (last allocation ended, or it came on). */
  emptySinceMs: number;
  /** An open power-up failure: not booted again by the policy. */
  failedPowerUp: boolean;
}

export interface PowerPlan {
  down: { nodeId: string; reason: string }[];
  up: { nodeId: string; reason: string }[];
}

/** GPUs per replica a queued job wants (a MIG slice or a share takes room on one GPU). */
export function queuedReplicasOf(rows: { id: string; kind: string; replicas: number; resources: unknown }[]): QueuedReplicas[] {
  return rows.map((r) => {
    const res = r.resources as JobResources;
    const gpus = res.gpus ?? (res.migProfile || res.gpuFraction ? 1 : 0);
    return { jobId: r.id, gpus, gpuModel: res.gpuModel, replicas: r.replicas };
  });
}

export function planPower(input: { nodes: PowerNode[]; demand: QueuedReplicas[]; nowMs: number; idleMs: number; headroom: number }): PowerPlan {
  const { nodes, demand } = input;
  const up = choosePowerUps(
    nodes
      .filter((n) => n.powerState !== 'off' || (n.state === 'ready' && !n.failedPowerUp))
      .map((n) => ({
        id: n.id,
        model: n.gpuModel,
        state: n.powerState,
        gpusFree: n.powerState === 'powering-up' ? n.gpuCount : n.state === 'ready' ? n.gpusFree : 0,
        gpuCount: n.gpuCount,
      })),
    demand,
  ).up;
  if (up.length) return { down: [], up };
  const counts = (n: PowerNode) => n.powerState === 'on' || n.powerState === 'powering-up';
  const onPerModel = new Map<string, number>();
  for (const n of nodes) if (counts(n) && n.gpuCount > 0) onPerModel.set(n.gpuModel ?? '', (onPerModel.get(n.gpuModel ?? '') ?? 0) + 1);
  // the latest nodes by id first: placement ties go to the earlier ones, which fill first
  const candidates = nodes
    .map((n, i) => ({ n, i }))
    .filter(({ n }) => n.powerState === 'on' && n.state === 'ready' && n.allocations === 0 && n.gpuCount > 0 && input.nowMs - n.emptySinceMs >= input.idleMs)
    .sort((a, b) => b.n.id.localeCompare(a.n.id))
    .map(({ i }) => i);
  const picked = choosePowerDowns(
    {
      candidates,
      gpus: (i) => nodes[i]!.gpuCount,
      model: (i) => nodes[i]!.gpuModel ?? '',
      freeGpus: nodes.reduce((s, n) => s + (n.powerState === 'powering-up' ? n.gpuCount : n.powerState === 'on' && n.state === 'ready' ? n.gpusFree : 0), 0),
      queuedGpus: demand.reduce((s, d) => s + d.gpus * d.replicas, 0),
      totalGpus: nodes.reduce((s, n) => s + n.gpuCount, 0),
      onPerModel,
    },
    input.headroom,
  );
  const idleMin = Math.round(input.idleMs / 60_000);
  return { down: picked.map((i) => ({ nodeId: nodes[i]!.id, reason: `empty for ${idleMin} min or more and not needed by the queue` })), up: [] };
}
