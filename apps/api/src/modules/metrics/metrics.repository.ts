import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** Cluster-wide figures for Prometheus (the operator's view; /metrics carries no tenant data beyond team ids). */
@Injectable()
export class MetricsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Pending jobs by team. */
  async queueDepthByTeam(): Promise<{ teamId: string; teamSlug: string; tenantSlug: string; pending: number }[]> {
    const db = this.prisma.client;
    const rows = await db.job.groupBy({ by: ['teamId'], where: { state: 'pending' }, _count: { _all: true } });
    const teams = await db.team.findMany({
      where: { id: { in: rows.map((r) => r.teamId) } },
      select: { id: true, slug: true, tenant: { select: { slug: true } } },
    });
    const byId = new Map(teams.map((t) => [t.id, t]));
    return rows.map((r) => ({ teamId: r.teamId, teamSlug: byId.get(r.teamId)?.slug ?? '', tenantSlug: byId.get(r.teamId)?.tenant.slug ?? '', pending: r._count._all }));
  }
}
