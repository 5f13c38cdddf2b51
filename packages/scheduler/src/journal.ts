/**
 * Mutation and undo: applying one replica's devices to a node, the journal that takes it back
 * (a gang that fails half-way, a Reserve or Permit plugin that refuses), releasing a placement
 * for what-ifs, and the placement record a caller receives. The caller re-classifies the nodes
 * these functions change.
 */
import type { GpuMode, MigSliceState, PlacedGpu, ReplicaPlacement } from './types';
import type { DeviceOption, GpuView, JobView, NodeView } from './views';

/** The node's own GPU views: copied from the shared views of its frozen state before its first change. */
function ownGpus(n: NodeView): GpuView[] {
  if (n.gpusShared) {
    n.gpus = n.gpus.map((g) => ({ ...g }));
    n.gpusShared = false;
  }
  return n.gpus;
}

/** A node's state before a change (enough to restore it). */
export interface Journal {
  node: NodeView;
  cpu: number;
  mem: number;
  gpus: { pos: number; mode: GpuMode; allocated: boolean; milliUsed: number; mig: MigSliceState[] }[];
}

/** Takes the devices of `option` and the job's CPU and memory on node `n`. */
export function applyReplica(n: NodeView, job: JobView, option: DeviceOption): Journal {
  const j: Journal = { node: n, cpu: n.cpuFree, mem: n.memFree, gpus: [] };
  const gpus = ownGpus(n);
  for (const pos of option.gpus) {
    const g = gpus[pos]!;
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
  return j;
}

/** Restores one journal entry's node (call in reverse order of the changes; the node owns its GPU views since the change). */
export function restore(j: Journal): void {
  j.node.cpuFree = j.cpu;
  j.node.memFree = j.mem;
  for (const s of j.gpus) {
    const g = j.node.gpus[s.pos]!;
    g.mode = s.mode;
    g.allocated = s.allocated;
    g.milliUsed = s.milliUsed;
    g.mig = s.mig;
  }
}

/** Frees the devices of one placed replica on node `n` (CPU and memory of `job` too). */
export function releaseReplica(n: NodeView, job: JobView, r: ReplicaPlacement): Journal {
  const j: Journal = { node: n, cpu: n.cpuFree, mem: n.memFree, gpus: [] };
  const gpus = ownGpus(n);
  for (const pg of r.gpus) {
    const pos = gpus.findIndex((g) => g.id === pg.gpuId);
    if (pos < 0) continue;
    const g = gpus[pos]!;
    j.gpus.push({ pos, mode: g.mode, allocated: g.allocated, milliUsed: g.milliUsed, mig: g.mig });
    if (pg.migProfile !== undefined) g.mig = g.mig.map((s) => (s.start === pg.migStart && s.profile === pg.migProfile ? { ...s, busy: false } : s));
    else if (pg.milli !== undefined) g.milliUsed = Math.max(0, g.milliUsed - pg.milli);
    else g.allocated = false;
  }
  n.cpuFree += job.cpu;
  n.memFree += job.mem;
  return j;
}

/** The placement record of one replica (GPU ids, the share or the MIG slice). */
export function placementOf(replica: number, n: NodeView, job: JobView, option: DeviceOption): ReplicaPlacement {
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
