import type { ClusterSnapshot, CycleDecision, GpuState, NodeState, PendingJob, ReplicaPlacement } from './types';

/**
 * Placeholder engine used by the foundation: first fit of whole-GPU replicas, in
 * priority then age order. Replaced by the plugin framework (issue 8) behind the same
 * `runCycle` signature. Mutates a private copy of the snapshot as it places.
 */
export function runCycle(snapshot: ClusterSnapshot, jobs: PendingJob[]): CycleDecision {
  const nodes: NodeState[] = snapshot.nodes.map((n) => ({ ...n, gpus: n.gpus.map((g) => ({ ...g })) }));
  const order = [...jobs].sort((a, b) => b.priority - a.priority || a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : 1));
  const decision: CycleDecision = { placed: [], pending: [] };
  for (const job of order) {
    const want = job.request.gpus ?? 0;
    if (want < 1) {
      decision.pending.push({ jobId: job.id, reasons: [{ code: 'unsupported_request', message: 'only whole-GPU requests are placed yet' }] });
      continue;
    }
    const replicas: ReplicaPlacement[] = [];
    const taken: GpuState[] = [];
    const usedCpu = new Map<NodeState, { cpu: number; mem: number }>();
    for (let r = 0; r < job.replicas; r++) {
      const node = nodes.find((n) => {
        if (!n.schedulable || (n.persona !== (job.persona ?? 'container'))) return false;
        const u = usedCpu.get(n) ?? { cpu: 0, mem: 0 };
        if (n.cpuMilliFree - u.cpu < job.request.cpuMilli || n.memoryMiBFree - u.mem < job.request.memoryMiB) return false;
        return freeGpus(n, job).length >= want;
      });
      if (!node) break;
      const gpus = freeGpus(node, job).slice(0, want);
      for (const g of gpus) {
        g.allocated = true;
        taken.push(g);
      }
      const u = usedCpu.get(node) ?? { cpu: 0, mem: 0 };
      usedCpu.set(node, { cpu: u.cpu + job.request.cpuMilli, mem: u.mem + job.request.memoryMiB });
      replicas.push({ replica: r, nodeId: node.id, gpus: gpus.map((g) => ({ gpuId: g.id, index: g.index })) });
    }
    if (replicas.length === job.replicas) {
      for (const [n, u] of usedCpu) {
        n.cpuMilliFree -= u.cpu;
        n.memoryMiBFree -= u.mem;
      }
      decision.placed.push({ jobId: job.id, replicas });
    } else {
      for (const g of taken) g.allocated = false;
      const free = nodes.reduce((s, n) => s + (n.schedulable ? freeGpus(n, job).length : 0), 0);
      decision.pending.push({
        jobId: job.id,
        reasons: [
          {
            code: 'insufficient_gpus',
            message: `needs ${job.replicas} x ${want} GPU${want > 1 ? 's' : ''}${job.request.gpuModels?.length ? ` (${job.request.gpuModels.join(' | ')})` : ''}: ${free} matching GPUs free`,
          },
        ],
      });
    }
  }
  return decision;
}

function freeGpus(n: NodeState, job: PendingJob): GpuState[] {
  const models = job.request.gpuModels;
  return n.gpus.filter(
    (g) => g.healthy && g.schedulable && g.mode === 'whole' && !g.allocated && (!models?.length || models.includes(g.model)),
  );
}
