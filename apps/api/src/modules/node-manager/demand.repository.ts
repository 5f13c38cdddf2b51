import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** A pending job as the planners see it: its shape, and whether a scheduling cycle has tried to place it. */
export interface PendingDemandJob {
  id: string;
  kind: string;
  replicas: number;
  resources: unknown;
  createdAt: Date;
  tried: boolean;
}

/** Planning inputs of the node manager's MIG and persona planners: the pending work no node took. */
@Injectable()
export class DemandRepository {
  constructor(private readonly prisma: PrismaService) {}

  private get db() {
    return this.prisma.client;
  }

  /**
   * Pending jobs (quota-held jobs excluded), `tried` once a cycle failed to place them: demand for
   * planners. One typed-SQL statement that leaves quota-held jobs and the reasons' text in
   * Postgres (the planners need each job's shape and whether a cycle tried it; the node manager
   * asks on every tick and whenever a cycle leaves MIG work waiting, over a queue of thousands).
   */
  async unplacedPendingJobs(): Promise<PendingDemandJob[]> {
    return this.prisma.sql.query<PendingDemandJob>(
      `SELECT "id", "kind"::text AS "kind", "replicas", "resources", "createdAt",
              NOT (COALESCE("reasons", '[]'::jsonb) @> '[{"code": "queued"}]'::jsonb) AS "tried"
         FROM "Job"
        WHERE "state" = 'pending' AND NOT (COALESCE("reasons", '[]'::jsonb) @> '[{"code": "quota_limit"}]'::jsonb)
        ORDER BY "createdAt"
        LIMIT 5000`,
    );
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
