import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';
import type { Holding, UsageRecord } from './usage-decay';

const LOCK_KEY = 'gantry:fair-share-roll';

/**
 * Decayed usage per team (TeamUsageHistory) and the allocation stretches it is rolled forward
 * from. `roll` is the scheduling cycle's (system); `teams` is a caller's read of its tenant's teams.
 */
@Injectable()
export class FairShareRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Rolls every team's decayed usage forward under one transaction-level advisory lock (two
   * workers never integrate the same stretch twice): `compute` gets the stored records and the
   * holdings since them, and returns the new records, which are written back.
   */
  async roll(
    nowMs: number,
    sinceMs: number,
    compute: (records: Map<string, UsageRecord>, holdings: Holding[], teamIds: string[]) => Map<string, UsageRecord>,
  ): Promise<Map<string, UsageRecord>> {
    return this.prisma.client.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${LOCK_KEY}))`;
      const [rows, teams] = await Promise.all([tx.teamUsageHistory.findMany(), tx.team.findMany({ select: { id: true, tenantId: true } })]);
      const records = new Map(rows.map((r) => [r.teamId, { gpuSeconds: r.decayedGpuSeconds, asOfMs: r.asOf.getTime() }]));
      const known = rows.map((r) => r.teamId);
      const oldest = rows.length ? Math.min(...rows.map((r) => r.asOf.getTime())) : nowMs;
      const holdings = [
        ...(known.length ? await this.holdings(tx, { teamId: { in: known } }, oldest, nowMs) : []),
        ...(teams.length > known.length ? await this.holdings(tx, { teamId: { notIn: known } }, sinceMs, nowMs) : []),
      ];
      const next = compute(
        records,
        holdings,
        teams.map((t) => t.id),
      );
      const tenantOf = new Map(teams.map((t) => [t.id, t.tenantId]));
      const values = [...next]
        .filter(([team]) => tenantOf.has(team))
        .map(([team, r]) => Prisma.sql`(${team}, ${tenantOf.get(team)!}, ${r.gpuSeconds}, ${new Date(r.asOfMs)}::timestamp)`);
      for (let i = 0; i < values.length; i += 500) {
        await tx.$executeRaw`
          INSERT INTO "TeamUsageHistory" ("teamId", "tenantId", "decayedGpuSeconds", "asOf")
          VALUES ${Prisma.join(values.slice(i, i + 500))}
          ON CONFLICT ("teamId") DO UPDATE SET "decayedGpuSeconds" = EXCLUDED."decayedGpuSeconds", "asOf" = EXCLUDED."asOf"`;
      }
      return next;
    });
  }

  /**
   * The teams of the caller's tenant (fair share is between a tenant's teams: a team-bound caller
   * sees its sister teams' figures too, as its queue position depends on them), with weights,
   * quotas, stored decayed usage, what they hold now and the holdings since their record.
   */
  async teams(scope: TenantScope, nowMs: number, sinceMs: number) {
    // the console's and the queue positions' view: on the reads' own connections
    const db = this.prisma.reads.client;
    const teams = await db.team.findMany({
      where: scopeWhere(scope, 'tenant-rows'),
      select: {
        id: true,
        tenantId: true,
        name: true,
        weight: true,
        quotas: { select: { gpuModel: true, guaranteed: true, limit: true } },
        usageHistory: { select: { decayedGpuSeconds: true, asOf: true } },
      },
      orderBy: [{ tenantId: 'asc' }, { name: 'asc' }],
      take: 1000,
    });
    const ids = teams.map((t) => t.id);
    const oldest = Math.min(nowMs, ...teams.map((t) => t.usageHistory?.asOf.getTime() ?? sinceMs));
    const [holdings, held, nodes, gpus] = await Promise.all([
      ids.length ? this.holdings(db, { AND: [scopeWhere(scope, 'tenant-rows'), { teamId: { in: ids } }] }, oldest, nowMs) : [],
      db.allocation.groupBy({
        by: ['teamId'],
        where: { AND: [scopeWhere(scope, 'tenant-rows'), { endedAt: null, teamId: { in: ids } }] },
        _sum: { gpuUnits: true, cpuMilli: true, memoryMiB: true },
      }),
      db.node.aggregate({ _sum: { cpuMilli: true, memoryMiB: true } }),
      db.gpu.count(),
    ]);
    const heldBy = new Map(
      held.map((h) => [h.teamId, { gpus: Number(h._sum.gpuUnits ?? 0), cpuMilli: h._sum.cpuMilli ?? 0, memoryMiB: h._sum.memoryMiB ?? 0 }]),
    );
    return {
      teams: teams.map((t) => ({
        id: t.id,
        tenantId: t.tenantId,
        name: t.name,
        weight: Number(t.weight),
        quotas: t.quotas.map((q) => ({ gpuModel: q.gpuModel, guaranteed: Number(q.guaranteed), limit: Number(q.limit) })),
        record: t.usageHistory ? { gpuSeconds: t.usageHistory.decayedGpuSeconds, asOfMs: t.usageHistory.asOf.getTime() } : undefined,
        held: heldBy.get(t.id) ?? { gpus: 0, cpuMilli: 0, memoryMiB: 0 },
      })),
      holdings,
      capacity: { gpus, cpuMilli: nodes._sum.cpuMilli ?? 0, memoryMiB: nodes._sum.memoryMiB ?? 0 },
    };
  }

  /** Allocation stretches overlapping (fromMs, nowMs] of the teams `where` selects. */
  private async holdings(db: Prisma.TransactionClient, where: Prisma.AllocationWhereInput, fromMs: number, nowMs: number): Promise<Holding[]> {
    const rows = await db.allocation.findMany({
      where: { AND: [where, { startedAt: { lt: new Date(nowMs) } }, { OR: [{ endedAt: null }, { endedAt: { gt: new Date(fromMs) } }] }] },
      select: { teamId: true, gpuUnits: true, startedAt: true, endedAt: true },
    });
    return rows.map((r) => ({ teamId: r.teamId, gpus: Number(r.gpuUnits), startMs: r.startedAt.getTime(), endMs: r.endedAt?.getTime() ?? null }));
  }
}
