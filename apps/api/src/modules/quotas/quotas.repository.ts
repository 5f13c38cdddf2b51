import { Injectable } from '@nestjs/common';
import { Prisma, type Tx } from '@gantry/db';
import type { QuotaEntry } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { covers, scopeSql, scopeWhere, type TenantScope } from '../../common/tenant-scope';

const dec = (n: number) => new Prisma.Decimal(n.toFixed(3));

/** Quotas, tenant totals and usage. Every read of tenant data takes the caller's scope. */
@Injectable()
export class QuotasRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The team with its tenant and quota rows, or null when the caller cannot see it. */
  findTeam(scope: TenantScope, teamId: string) {
    return this.prisma.client.team.findFirst({
      where: { AND: [{ id: teamId }, scopeWhere(scope, 'team')] },
      include: { tenant: true, quotas: { orderBy: { gpuModel: 'asc' } } },
    });
  }

  findTenant(scope: TenantScope, tenantId: string) {
    return this.prisma.client.tenant.findFirst({ where: { AND: [{ id: tenantId }, scopeWhere(scope, 'tenant')] } });
  }

  /**
   * Replaces a team's quota rows. The tenant row is locked first, so two concurrent changes in
   * one tenant are checked one after the other against the tenant total. `check` runs under the
   * lock with the current state and throws to refuse. Null when the team is outside the scope.
   */
  replaceTeamQuotas(
    scope: TenantScope,
    teamId: string,
    entries: QuotaEntry[],
    opts: { setCeilings: boolean },
    check: (state: { gpuTotal: number | null; teams: { teamId: string; guaranteed: number }[]; current: StoredRow[] }) => void,
  ) {
    return this.prisma.client.$transaction(async (tx) => {
      const team = await tx.team.findFirst({ where: { AND: [{ id: teamId }, scopeWhere(scope, 'team')] }, select: { tenantId: true } });
      if (!team) return null;
      const tenantId = team.tenantId;
      const [tenant] = await tx.$queryRaw<{ gpuTotal: Prisma.Decimal | null }[]>`SELECT "gpuTotal" FROM "Tenant" WHERE id = ${tenantId} FOR UPDATE`;
      const rows = await tx.quota.findMany({ where: { team: { tenantId } } });
      const teams = new Map<string, number>();
      for (const r of rows) teams.set(r.teamId, (teams.get(r.teamId) ?? 0) + Number(r.guaranteed));
      const current = rows.filter((r) => r.teamId === teamId).map(toStored);
      check({
        gpuTotal: tenant?.gpuTotal == null ? null : Number(tenant.gpuTotal),
        teams: [...teams].map(([id, guaranteed]) => ({ teamId: id, guaranteed })),
        current,
      });
      const keep = entries.map((e) => e.gpuModel);
      await tx.quota.deleteMany({ where: { teamId, gpuModel: { notIn: keep }, ...scopeWhere(scope, 'quota') } });
      for (const e of entries) {
        const before = current.find((c) => c.gpuModel === e.gpuModel);
        // The tenant admin's values are the ceilings; a row made before ceilings existed keeps
        // its values as ceilings the first time a team admin changes it.
        const ceilings = opts.setCeilings
          ? { maxGuaranteed: dec(e.guaranteed), maxLimit: dec(e.limit) }
          : before && before.maxGuaranteed === null
            ? { maxGuaranteed: dec(before.guaranteed), maxLimit: dec(before.maxLimit ?? before.limit) }
            : {};
        // A team admin's entry without a budget keeps the stored one; a tenant admin's clears it.
        const keepBudget = !opts.setCeilings && e.gpuHourBudget === undefined && before !== undefined;
        const data = {
          guaranteed: dec(e.guaranteed),
          limit: dec(e.limit),
          ...(keepBudget ? {} : { gpuHourBudget: e.gpuHourBudget == null ? null : dec(e.gpuHourBudget) }),
          budgetPolicy: e.budgetPolicy,
          ...ceilings,
        };
        await tx.quota.upsert({
          where: { teamId_gpuModel: { teamId, gpuModel: e.gpuModel } },
          update: data,
          create: { teamId, gpuModel: e.gpuModel, ...data },
        });
      }
      return { before: current, after: await tx.quota.findMany({ where: { teamId }, orderBy: { gpuModel: 'asc' } }) };
    });
  }

  /**
   * Sets the tenant total under a lock of the tenant row; `check` sees the teams' guaranteed sum.
   * Null when the tenant is outside the scope.
   */
  setTenantTotal(scope: TenantScope, tenantId: string, gpuTotal: number | null, check: (guaranteedSum: number) => void) {
    // The Tenant row is the scope itself: no read is needed to know whether the caller may touch it.
    if (!covers(scope, { tenantId })) return Promise.resolve(null);
    return this.prisma.client.$transaction(async (tx: Tx) => {
      const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM "Tenant" WHERE id = ${tenantId} FOR UPDATE`;
      if (!locked.length) return null;
      const sum = await tx.quota.aggregate({ where: { team: { tenantId } }, _sum: { guaranteed: true } });
      const guaranteedSum = Number(sum._sum.guaranteed ?? 0);
      check(guaranteedSum);
      const tenant = await tx.tenant.update({ where: { id: tenantId }, data: { gpuTotal: gpuTotal === null ? null : dec(gpuTotal) } });
      return { tenant, guaranteedSum };
    });
  }

  /**
   * What bounds a team's work of `gpuModel` (any model when undefined) whatever the cluster is
   * doing: its quota rows, its tenant's GPU total (null: unbounded), and the GPUs of that model
   * the cluster has in all.
   */
  async bounds(
    scope: TenantScope,
    teamId: string,
    gpuModel: string | undefined,
  ): Promise<{ rows: { gpuModel: string; guaranteed: number; limit: number }[]; tenantTotal: number | null; clusterGpus: number }> {
    const [rows, team, clusterGpus] = await Promise.all([
      this.prisma.client.quota.findMany({ where: { teamId, ...scopeWhere(scope, 'quota') } }),
      this.prisma.client.team.findFirst({ where: { AND: [{ id: teamId }, scopeWhere(scope, 'team')] }, select: { tenant: { select: { gpuTotal: true } } } }),
      this.prisma.client.gpu.count({ where: gpuModel ? { model: gpuModel } : {} }),
    ]);
    const total = team?.tenant.gpuTotal;
    return {
      rows: rows.map((q) => ({ gpuModel: q.gpuModel, guaranteed: Number(q.guaranteed), limit: Number(q.limit) })),
      tenantTotal: total == null ? null : Number(total),
      clusterGpus,
    };
  }

  /** The sum of the guaranteed GPUs of all the tenant's teams (a team-bound caller sees its tenant's sum). */
  async guaranteedSum(scope: TenantScope, tenantId: string): Promise<number> {
    const sum = await this.prisma.client.quota.aggregate({
      where: { team: { AND: [{ tenantId }, scopeWhere(scope, 'tenant-rows')] } },
      _sum: { guaranteed: true },
    });
    return Number(sum._sum.guaranteed ?? 0);
  }

  /** GPUs held now by the team, per GPU model. */
  async inUseByModel(scope: TenantScope, teamId: string): Promise<Map<string, number>> {
    const rows = await this.prisma.client.allocation.groupBy({
      by: ['gpuModel'],
      where: { AND: [{ teamId, endedAt: null }, scopeWhere(scope, 'team-rows')] },
      _sum: { gpuUnits: true },
    });
    return new Map(rows.map((r) => [r.gpuModel, Number(r._sum.gpuUnits ?? 0)]));
  }

  pendingJobs(scope: TenantScope, teamId: string) {
    return this.prisma.client.job.findMany({
      where: { AND: [{ teamId, state: 'pending' }, scopeWhere(scope, 'team-rows')] },
      select: { resources: true, replicas: true },
      take: 10_000,
    });
  }

  /** GPU-hours the team's allocations held inside [start, end). */
  async gpuHours(scope: TenantScope, teamId: string, start: Date, end: Date, now: Date): Promise<number> {
    const scoped = scopeSql(scope).map((c) => Prisma.sql` AND ${c}`);
    const [row] = await this.prisma.client.$queryRaw<{ h: number | null }[]>`
      SELECT SUM("gpuUnits"::float8 * EXTRACT(EPOCH FROM (LEAST(COALESCE("endedAt", ${now}::timestamp), ${end}::timestamp) - GREATEST("startedAt", ${start}::timestamp)))) / 3600 AS h
      FROM "Allocation"
      WHERE "teamId" = ${teamId} AND "startedAt" < ${end}::timestamp AND ("endedAt" IS NULL OR "endedAt" > ${start}::timestamp)${scoped.length ? Prisma.join(scoped, '') : Prisma.empty}`;
    return Math.max(0, Number(row?.h ?? 0));
  }
}

export interface StoredRow {
  gpuModel: string;
  guaranteed: number;
  limit: number;
  maxGuaranteed: number | null;
  maxLimit: number | null;
  gpuHourBudget: number | null;
  budgetPolicy: string;
}

function toStored(r: {
  gpuModel: string;
  guaranteed: Prisma.Decimal;
  limit: Prisma.Decimal;
  maxGuaranteed: Prisma.Decimal | null;
  maxLimit: Prisma.Decimal | null;
  gpuHourBudget: Prisma.Decimal | null;
  budgetPolicy: string;
}): StoredRow {
  return {
    gpuHourBudget: r.gpuHourBudget == null ? null : Number(r.gpuHourBudget),
    budgetPolicy: r.budgetPolicy,
    gpuModel: r.gpuModel,
    guaranteed: Number(r.guaranteed),
    limit: Number(r.limit),
    maxGuaranteed: r.maxGuaranteed == null ? null : Number(r.maxGuaranteed),
    maxLimit: r.maxLimit == null ? null : Number(r.maxLimit),
  };
}
