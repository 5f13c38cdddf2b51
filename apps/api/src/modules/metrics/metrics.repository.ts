import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

export interface QueueDepthRow {
  tenantId: string;
  teamId: string;
  pending: number;
  /** Only when asked for (GANTRY_METRICS_TENANT_LABELS=true). */
  tenantSlug?: string;
  teamSlug?: string;
}

/** Cluster-wide figures for Prometheus (the operator's view: tenants and teams by opaque id unless names are asked for). */
@Injectable()
export class MetricsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Pending jobs by team; with `names`, the tenant and team slugs too. */
  async queueDepthByTeam(opts: { names: boolean }): Promise<QueueDepthRow[]> {
    const db = this.prisma.client;
    const rows = await db.job.groupBy({ by: ['tenantId', 'teamId'], where: { state: 'pending' }, _count: { _all: true } });
    const out: QueueDepthRow[] = rows.map((r) => ({ tenantId: r.tenantId, teamId: r.teamId, pending: r._count._all }));
    if (!opts.names || !out.length) return out;
    const teams = await db.team.findMany({
      where: { id: { in: out.map((r) => r.teamId) } },
      select: { id: true, slug: true, tenant: { select: { slug: true } } },
    });
    const byId = new Map(teams.map((t) => [t.id, t]));
    return out.map((r) => ({ ...r, tenantSlug: byId.get(r.teamId)?.tenant.slug ?? '', teamSlug: byId.get(r.teamId)?.slug ?? '' }));
  }
}
