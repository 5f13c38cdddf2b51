/**
 * Reserve and Permit plugins: `team-usage` (keeps fair-share usage current within a cycle) and
 * `gang` (all replicas or none, in the required topology domain).
 */
import { MIG_COMPUTE_SLICES, migSliceFraction } from '@gantry/contracts';
import { type PermitPlugin, type ReservePlugin, SUCCESS, unschedulable } from '../framework';
import type { ReplicaPlacement } from '../types';
import type { EngineHandle, JobView } from '../views';

export function teamUsage(engine: EngineHandle): ReservePlugin {
  const usage = engine.teamUsage;
  const add = (job: JobView, replicas: ReplicaPlacement[], sign: number) => {
    const u = usage.get(job.job.teamId) ?? { gpus: 0, cpuMilli: 0, memoryMiB: 0 };
    u.gpus += sign * replicas.length * gpuUnits(job);
    u.cpuMilli += sign * replicas.length * job.cpu;
    u.memoryMiB += sign * replicas.length * job.mem;
    usage.set(job.job.teamId, u);
  };
  return {
    name: 'team-usage',
    reserve(_s, job, replicas) {
      add(job, replicas, 1);
      return SUCCESS;
    },
    unreserve(_s, job, replicas) {
      add(job, replicas, -1);
    },
  };
}

/** GPUs as a decimal (DESIGN: a MIG slice counts compute slices / 7, a share its fraction). */
export function gpuUnits(job: JobView): number {
  if (job.kind === 'whole') return job.gpus;
  if (job.kind === 'share') return job.milli / 1000;
  // an unknown profile (never validated, never placed) counts as the smallest slice
  if (job.kind === 'mig') return migSliceFraction(job.migProfile ?? '') ?? 1 / MIG_COMPUTE_SLICES;
  return 0;
}

export function gangPermit(engine: EngineHandle): PermitPlugin {
  return {
    name: 'gang',
    permit(_s, job, replicas) {
      if (replicas.length !== job.job.replicas) {
        return unschedulable('gang_incomplete', `gang needs ${job.job.replicas} replicas at once, only ${replicas.length} placed`);
      }
      const t = job.job.topology;
      if (t.required && t.level !== 'any' && replicas.length > 1) {
        const byId = engine.nodeById;
        const keys = new Set(
          replicas.map((r) => {
            const n = byId.get(r.nodeId)!;
            return t.level === 'node' ? n.id : t.level === 'leaf' ? `${n.spine}/${n.leaf}` : n.spine;
          }),
        );
        if (keys.size > 1) return unschedulable('topology_unsatisfiable', `replicas span ${keys.size} ${t.level}s; required: one`);
      }
      return SUCCESS;
    },
  };
}
