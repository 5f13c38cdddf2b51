import { Injectable, Logger } from '@nestjs/common';
import { PRIORITY_VALUE, type JobResources, type Reason } from '@gantry/contracts';
import { migProfile, runCycle, type CycleDecision, type NodeState, type ReplicaPlacement } from '@gantry/scheduler';
import { QueuesService } from '../../queues/queues.service';
import { ClusterRepository } from '../cluster/cluster.repository';
import { replicaGpuUnits } from '../jobs/job-units';
import { admit } from './quota-admission';
import { SchedulingRepository, type NewAllocation } from './scheduling.repository';
import { buildSnapshot, pendingJob } from './snapshot';

export interface CycleReport {
  pending: number;
  placed: number;
  conflicts: number;
  ms: number;
}

type PendingRow = Awaited<ReturnType<SchedulingRepository['pendingJobs']>>[number];

/** The scheduling cycle (DESIGN.md section 4): snapshot, order, admit, place, commit, explain. */
@Injectable()
export class SchedulingService {
  private readonly logger = new Logger('scheduler');

  constructor(
    private readonly repo: SchedulingRepository,
    private readonly cluster: ClusterRepository,
    private readonly queues: QueuesService,
  ) {}

  async cycle(): Promise<CycleReport> {
    const t0 = performance.now();
    // 1. snapshot
    const [nodes, pending] = await Promise.all([this.cluster.allNodes(), this.repo.pendingJobs()]);
    if (!pending.length) return { pending: 0, placed: 0, conflicts: 0, ms: performance.now() - t0 };
    const snapshot = buildSnapshot(nodes);
    // 2. order: priority, then age (the engine orders again, with fair share, among admitted jobs)
    const ordered = [...pending].sort(
      (a, b) => PRIORITY_VALUE[b.priority] - PRIORITY_VALUE[a.priority] || a.createdAt.getTime() - b.createdAt.getTime(),
    );
    // 3. admit
    const teamIds = [...new Set(ordered.map((j) => j.teamId))];
    const [usage, quotas] = await Promise.all([this.repo.usage(), this.repo.quotas(teamIds)]);
    const { admitted, held } = admit(
      ordered.map((j) => ({ ...j, gpuModel: (j.resources as JobResources).gpuModel, units: replicaGpuUnits(j.resources as JobResources) * j.replicas })),
      usage,
      quotas.map((q) => ({ teamId: q.teamId, gpuModel: q.gpuModel, limit: Number(q.limit) })),
    );
    // 4-5. place (the engine)
    const decision: CycleDecision = runCycle(snapshot, admitted.map(pendingJob));
    // 6. commit
    const byId = new Map(pending.map((j) => [j.id, j]));
    const nodesById = new Map(snapshot.nodes.map((n) => [n.id, n]));
    let placed = 0;
    let conflicts = 0;
    const lost: { jobId: string; reasons: Reason[] }[] = [];
    for (const d of decision.placed) {
      const job = byId.get(d.jobId)!;
      const ok = await this.repo.commitPlacement(job, toAllocations(job, d.replicas, nodesById), describe(d.replicas, nodesById));
      if (ok) {
        placed++;
        await this.queues.lifecycle({ action: 'start', jobId: job.id });
      } else {
        conflicts++;
        lost.push({ jobId: job.id, reasons: [{ code: 'placement_conflict', message: 'the chosen GPUs changed meanwhile; retrying in the next cycle' }] });
      }
    }
    // 7. explain
    const reasons = [...held, ...decision.pending, ...lost].filter((u) => !sameReasons(byId.get(u.jobId)?.reasons, u.reasons));
    await this.repo.setReasons(reasons);
    if (conflicts) await this.queues.requestSchedule('placement conflicts');
    const report = { pending: pending.length, placed, conflicts, ms: Math.round(performance.now() - t0) };
    if (placed || conflicts) this.logger.log(`cycle: ${placed} placed, ${conflicts} conflicts, ${pending.length} pending, ${report.ms} ms`);
    return report;
  }
}

/** Allocation rows of a placement: the replica's CPU and memory ride on its first GPU row. */
function toAllocations(job: PendingRow, replicas: ReplicaPlacement[], nodes: Map<string, NodeState>): NewAllocation[] {
  const r = job.resources as JobResources;
  const out: NewAllocation[] = [];
  for (const rep of replicas) {
    const node = nodes.get(rep.nodeId)!;
    rep.gpus.forEach((g, i) => {
      const gpu = node.gpus.find((x) => x.id === g.gpuId)!;
      const milli = g.migProfile ? 1000 : (g.milli ?? 1000);
      const units = g.migProfile ? (migProfile(gpu.model, g.migProfile)?.compute ?? 7) / 7 : milli / 1000;
      out.push({
        replica: rep.replica,
        nodeId: rep.nodeId,
        gpuId: g.gpuId,
        gpuModel: gpu.model,
        migProfile: g.migProfile,
        migStart: g.migStart,
        milli,
        gpuUnits: units,
        cpuMilli: i === 0 ? r.cpuMilli : 0,
        memoryMiB: i === 0 ? r.memoryMiB : 0,
        makeShared: milli < 1000 && !g.migProfile && gpu.mode === 'whole',
      });
    });
  }
  return out;
}

function describe(replicas: ReplicaPlacement[], nodes: Map<string, NodeState>): string {
  const parts = replicas.map((r) => {
    const node = nodes.get(r.nodeId)!;
    const gpus = r.gpus.map((g) => (g.migProfile ? `${g.index}:${g.migProfile}@${g.migStart}` : g.milli && g.milli < 1000 ? `${g.index}:${g.milli / 1000}` : `${g.index}`));
    return `replica ${r.replica} on ${node.name} GPU ${gpus.join(',')}`;
  });
  return `placed: ${parts.join('; ')}`;
}

function sameReasons(a: unknown, b: Reason[]): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b);
}
