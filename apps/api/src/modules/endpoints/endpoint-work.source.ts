import { Injectable } from '@nestjs/common';
import type { Reason } from '@gantry/contracts';
import { QueuesService } from '../../queues/queues.service';
import type { NewAllocation } from '../allocations/gpu-slots';
import type { QuotaGuard } from '../quotas/quota-guard';
import { EndpointReplicasRepository } from './endpoint-replicas.repository';
import { EndpointTraffic } from './endpoint-traffic.service';

const PREFIX = 'endpoint:';

/**
 * Endpoint replicas as the scheduling cycle's second source of pending work: each missing
 * replica is one pending unit (one replica, no gang) that goes through the same admission
 * (team quota), the same engine and the same guarded commit as a job. Inference outranks
 * training and batch (`high`, as KAI ranks inference above build and train); replicas run on
 * `container` nodes (the engine matches personas exactly; see docs/endpoints.md).
 */
@Injectable()
export class EndpointWorkSource {
  constructor(
    private readonly repo: EndpointReplicasRepository,
    private readonly traffic: EndpointTraffic,
    private readonly queues: QueuesService,
  ) {}

  /** Pending rows shaped like the cycle's pending jobs. */
  async pending() {
    const work = await this.repo.pendingWork();
    return work.flatMap((w) =>
      w.indexes.map((replica) => ({
        id: `${PREFIX}${w.endpointId}:${replica}`,
        tenantId: w.tenantId,
        teamId: w.teamId,
        kind: 'inference' as const,
        priority: 'high' as const,
        createdAt: w.createdAt,
        replicas: 1,
        resources: w.resources,
        topologyLevel: 'any',
        topologyRequired: false,
        reasons: [] as Reason[],
        version: 0,
      })),
    );
  }

  owns(id: string): boolean {
    return id.startsWith(PREFIX);
  }

  /** Commits one replica (quota re-checked under the team lock, as for jobs) and asks the worker to start it. False when the slots, the quota or the need went away. */
  async commit(work: { id: string; tenantId: string; teamId: string }, allocs: NewAllocation[], guard?: QuotaGuard): Promise<boolean> {
    const { endpointId, replica } = parse(work.id);
    const row = await this.repo.commitReplica({ endpointId, replica, tenantId: work.tenantId, teamId: work.teamId }, allocs, guard);
    if (!row) return false;
    await this.queues.autoscale({ action: 'start', replicaId: row.id });
    await this.traffic.setReasons(endpointId, []);
    return true;
  }

  /** Why replicas still wait (quota, capacity), kept for GET /v1/endpoints/:id. */
  async explain(updates: { jobId: string; reasons: Reason[] }[]): Promise<void> {
    const byEndpoint = new Map<string, Reason[]>();
    for (const u of updates) if (this.owns(u.jobId)) byEndpoint.set(parse(u.jobId).endpointId, u.reasons);
    for (const [endpointId, reasons] of byEndpoint) await this.traffic.setReasons(endpointId, reasons);
  }
}

function parse(id: string): { endpointId: string; replica: number } {
  const [endpointId, replica] = id.slice(PREFIX.length).split(':');
  return { endpointId: endpointId!, replica: Number(replica) };
}
