import type { ClusterSnapshot, NodeState } from '@gantry/scheduler';

/** GPU resources held per node by workloads Gantry did not start (the driver's `externalGpuUse`). */
export type ForeignGpuUseByNode = ReadonlyMap<string, Readonly<Record<string, number>>>;

const WHOLE_GPU = 'nvidia.com/gpu';
const MIG_PREFIX = 'nvidia.com/mig-';

/**
 * Marks, on each node, as many free whole GPUs and free MIG slices as foreign pods hold
 * (`nvidia.com/gpu`, `nvidia.com/mig-<profile>`) as taken. The device plugin chose which ones;
 * Gantry only knows how many, so it takes the highest-indexed free ones: the count is what keeps a
 * placement from being refused by the kubelet. Returns the snapshot with the marked nodes
 * copied (the nodes it is given are left as they are: buildSnapshot shares them between cycles).
 */
export function markForeignUse(snapshot: ClusterSnapshot, foreign: ForeignGpuUseByNode): ClusterSnapshot {
  if (foreign.size === 0) return snapshot;
  return { ...snapshot, nodes: snapshot.nodes.map((n) => (foreign.has(n.name) ? markNode(copyNode(n), foreign.get(n.name)!) : n)) };
}

function copyNode(n: NodeState): NodeState {
  return { ...n, gpus: n.gpus.map((g) => ({ ...g, mig: g.mig.map((s) => ({ ...s })) })) };
}

/** Marks `use` on `node` (a copy) and returns it. */
function markNode(node: NodeState, use: Readonly<Record<string, number>>): NodeState {
  let wholeLeft = use[WHOLE_GPU] ?? 0;
  for (const gpu of [...node.gpus].sort((a, b) => b.index - a.index)) {
    if (wholeLeft <= 0) break;
    if (gpu.mode !== 'whole' || gpu.allocated) continue;
    gpu.allocated = true;
    wholeLeft--;
  }
  for (const [resource, amount] of Object.entries(use)) {
    if (!resource.startsWith(MIG_PREFIX)) continue;
    const profile = resource.slice(MIG_PREFIX.length);
    let left = amount;
    for (const gpu of [...node.gpus].sort((a, b) => b.index - a.index)) {
      for (const slice of gpu.mig) {
        if (left <= 0) break;
        if (slice.profile !== profile || slice.busy) continue;
        slice.busy = true;
        left--;
      }
    }
  }
  return node;
}
