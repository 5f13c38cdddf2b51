import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** Planning inputs of the node manager's MIG and persona planners: the pending work no node took. */
@Injectable()
export class DemandRepository {
  constructor(private readonly prisma: PrismaService) {}

  private get db() {
    return this.prisma.client;
  }

  /** Pending jobs (quota-held jobs excluded), `tried` once a cycle failed to place them: demand for planners. */
  async unplacedPendingJobs() {
    const rows = await this.db.job.findMany({
      where: { state: 'pending' },
      select: { id: true, kind: true, replicas: true, resources: true, reasons: true, createdAt: true },
      orderBy: { createdAt: 'asc' },
      take: 5000,
    });
    return rows
      .map((r) => {
        const codes = ((r.reasons as { code?: string }[] | null) ?? []).map((x) => x.code);
        return { ...r, quotaHeld: codes.includes('quota_limit'), tried: !codes.includes('queued') };
      })
      .filter((r) => !r.quotaHeld);
  }

  /**
   * Endpoint replicas still to place (serving + warm-pool targets above the active replicas),
   * shaped like pending container jobs: an endpoint at zero whose replica needs a MIG slice
   * is MIG demand like any job (the MIG planner re-partitions a free GPU for it).
   */
  async missingReplicas() {
    const eps = await this.db.endpoint.findMany({
      where: { deletedAt: null, OR: [{ desiredReplicas: { gt: 0 } }, { warmPool: { gt: 0 } }] },
      select: { id: true, resources: true, desiredReplicas: true, warmPool: true, _count: { select: { replicas: { where: { endedAt: null } } } } },
      take: 5000,
    });
    return eps
      .map((e) => ({ id: `endpoint:${e.id}`, kind: 'inference', replicas: e.desiredReplicas + e.warmPool - e._count.replicas, resources: e.resources }))
      .filter((e) => e.replicas > 0);
  }
}
