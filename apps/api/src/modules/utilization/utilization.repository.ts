import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import type { UtilizationGroupBy } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { scopeSql, scopeWhere, type TenantScope } from '../../common/tenant-scope';

/**
 * Aggregated rollups of one group and GPU model: for each answer bucket `k[i]`, the sums of
 * capacity (c), allocated (a), busy (b) GPU-seconds, memory MiB-seconds (m), joules (e) and
 * allocated-but-idle GPU-seconds (i).
 */
export interface UsageRows {
  key: string;
  gpuModel: string;
  k: number[];
  c: number[];
  a: number[];
  b: number[];
  m: number[];
  e: number[];
  i: number[];
}

/** UsageRows as the SQL answers them: each array as its Postgres text form. */
type TextRows = { key: string; gpuModel: string } & Record<'k' | 'c' | 'a' | 'b' | 'm' | 'e' | 'i', string>;

const GROUP_COLUMN: Record<UtilizationGroupBy, string> = {
  team: '"teamId"',
  tenant: '"tenantId"',
  gpuModel: '"gpuModel"',
  node: '"nodeId"',
};

/**
 * Reads of the telemetry tables. Rollup rows carry tenantId/teamId: a tenant scope keeps a
 * caller to its own rows (the unallocated part of the cluster, tenantId '', is the platform's).
 */
@Injectable()
export class UtilizationRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Sums of the rollups of `stepSeconds` in [from, to), by group, GPU model and answer bucket. */
  async usage(scope: TenantScope, q: { groupBy: UtilizationGroupBy; from: Date; to: Date; rollupSeconds: number; stepSeconds: number }): Promise<UsageRows[]> {
    const group = Prisma.raw(GROUP_COLUMN[q.groupBy]);
    const conditions = [
      Prisma.sql`"stepSeconds" = ${q.rollupSeconds}`,
      Prisma.sql`"bucket" >= ${q.from}::timestamp(3)`,
      Prisma.sql`"bucket" < ${q.to}::timestamp(3)`,
      // Node reports read the per-node rows; the others the rows that sum every node ('').
      q.groupBy === 'node' ? Prisma.sql`"nodeId" <> ''` : Prisma.sql`"nodeId" = ''`,
      ...scopeSql(scope),
    ];
    // Teams and tenants are holders: the unallocated part of the capacity belongs to none.
    if (q.groupBy === 'team' || q.groupBy === 'tenant') conditions.push(Prisma.sql`"tenantId" <> ''`);
    // One row per group and model with the buckets as arrays: far fewer rows to decode.
    // The bucket index uses float8 epoch arithmetic (numeric division is several times slower).
    // The arrays are not sorted by bucket: all aggregates of a group see its rows in the same
    // order, so c[i], a[i]... belong to k[i], and the service places each value by k[i].
    // (Sorting each of the six arrays cost six sorts of every row.) The arrays travel as text
    // ('{1,2.5,...}', float8 printed exactly) and are split here: decoding 100 x 720 x 6
    // numbers through the driver's array parsing cost more than the query.
    const k = Prisma.sql`floor(date_part('epoch', "bucket" - ${q.from}::timestamp(3)) / ${q.stepSeconds}::float8)::int`;
    const db = this.prisma.client;
    const query =
      rollupPlan(q.groupBy, q.stepSeconds, q.rollupSeconds) === 'direct'
        ? // The rollup is the answer's bucket and holds one row per group, model and bucket:
          // aggregate the rows straight into arrays, no per-bucket re-aggregation.
          Prisma.sql`
      SELECT ${group} AS key, "gpuModel", array_agg(${k})::text AS k, array_agg("capacitySeconds"::float8)::text AS c, array_agg("allocatedSeconds"::float8)::text AS a,
        array_agg("busySeconds"::float8)::text AS b, array_agg("memoryMiBSeconds"::float8)::text AS m, array_agg("energyJoules"::float8)::text AS e,
        array_agg("idleSeconds"::float8)::text AS i
      FROM "UsageRollup"
      WHERE ${Prisma.join(conditions, ' AND ')}
      GROUP BY 1, 2`
        : Prisma.sql`
      SELECT key, "gpuModel", array_agg(k)::text AS k, array_agg(c)::text AS c, array_agg(a)::text AS a, array_agg(b)::text AS b,
        array_agg(m)::text AS m, array_agg(e)::text AS e, array_agg(i)::text AS i
      FROM (
        SELECT ${group} AS key, "gpuModel", ${k} AS k,
          sum("capacitySeconds")::float8 AS c, sum("allocatedSeconds")::float8 AS a, sum("busySeconds")::float8 AS b,
          sum("memoryMiBSeconds")::float8 AS m, sum("energyJoules")::float8 AS e, sum("idleSeconds")::float8 AS i
        FROM "UsageRollup"
        WHERE ${Prisma.join(conditions, ' AND ')}
        GROUP BY 1, 2, 3
      ) cells
      GROUP BY 1, 2`;
    // Enough sort/hash memory for a 30-day report to aggregate without spilling to disk.
    // extra_float_digits = 1 (Postgres' default) prints float8 exactly (shortest round-trip form).
    const [, , rows] = await db.$transaction([
      db.$executeRaw`SET LOCAL work_mem = '64MB'`,
      db.$executeRaw`SET LOCAL extra_float_digits = 1`,
      db.$queryRaw<TextRows[]>(query),
    ]);
    const num = (xs: string) => (xs.length > 2 ? xs.slice(1, -1).split(',').map(Number) : []);
    return rows.map((r) => ({ key: r.key, gpuModel: r.gpuModel, k: num(r.k), c: num(r.c), a: num(r.a), b: num(r.b), m: num(r.m), e: num(r.e), i: num(r.i) }));
  }

  /** Display names of the groups (teams and tenants of the caller's scope, nodes). */
  async labels(scope: TenantScope, groupBy: UtilizationGroupBy, keys: string[]): Promise<Map<string, string>> {
    const db = this.prisma.client;
    if (!keys.length) return new Map();
    switch (groupBy) {
      case 'team': {
        const rows = await db.team.findMany({ where: { AND: [{ id: { in: keys } }, scopeWhere(scope, 'team')] }, select: { id: true, name: true } });
        return new Map(rows.map((r) => [r.id, r.name]));
      }
      case 'tenant': {
        const rows = await db.tenant.findMany({
          where: { AND: [{ id: { in: keys } }, scopeWhere(scope, 'tenant')] },
          select: { id: true, name: true },
        });
        return new Map(rows.map((r) => [r.id, r.name]));
      }
      case 'node': {
        const rows = await db.node.findMany({ where: { id: { in: keys } }, select: { id: true, name: true } });
        return new Map(rows.map((r) => [r.id, r.name]));
      }
      case 'gpuModel':
        return new Map(keys.map((k) => [k, k]));
      default: {
        const never: never = groupBy;
        throw new Error(`unknown groupBy ${String(never)}`);
      }
    }
  }

  /**
   * Hardware only: each node's GPU count, model(s) and MIG layout (the capacity columns of a
   * per-node export): `gpu 0: 3g.40gb+4g.40gb` per partitioned GPU, none when no GPU is.
   */
  async nodeCapacity(nodeIds: string[]): Promise<Map<string, { gpuCount: number; gpuModel: string; migLayout: string | null }>> {
    if (!nodeIds.length) return new Map();
    const gpus = await this.prisma.client.gpu.findMany({
      where: { nodeId: { in: nodeIds } },
      select: { nodeId: true, model: true, index: true, instances: { select: { profile: true, start: true }, orderBy: { start: 'asc' } } },
      orderBy: { index: 'asc' },
    });
    const out = new Map<string, { gpuCount: number; models: Set<string>; mig: string[] }>();
    for (const g of gpus) {
      const n = out.get(g.nodeId) ?? { gpuCount: 0, models: new Set<string>(), mig: [] };
      n.gpuCount++;
      n.models.add(g.model);
      if (g.instances.length) n.mig.push(`gpu ${g.index}: ${g.instances.map((i) => i.profile).join('+')}`);
      out.set(g.nodeId, n);
    }
    return new Map(
      [...out].map(([id, n]) => [id, { gpuCount: n.gpuCount, gpuModel: [...n.models].sort().join(' + '), migLayout: n.mig.length ? n.mig.join('; ') : null }]),
    );
  }

  /** Per team of the caller's scope: GPU units held now and the quota (summed over flavours). */
  async teamsNow(scope: TenantScope): Promise<Map<string, { allocatedGpus: number; quotaGuaranteed: number | null; quotaLimit: number | null }>> {
    const db = this.prisma.client;
    const [held, quotas] = await Promise.all([
      db.allocation.groupBy({ by: ['teamId'], where: { AND: [{ endedAt: null }, scopeWhere(scope, 'team-rows')] }, _sum: { gpuUnits: true } }),
      db.quota.groupBy({ by: ['teamId'], where: { team: scopeWhere(scope, 'team') }, _sum: { guaranteed: true, limit: true } }),
    ]);
    const out = new Map<string, { allocatedGpus: number; quotaGuaranteed: number | null; quotaLimit: number | null }>();
    for (const q of quotas) out.set(q.teamId, { allocatedGpus: 0, quotaGuaranteed: Number(q._sum.guaranteed ?? 0), quotaLimit: Number(q._sum.limit ?? 0) });
    for (const h of held) {
      const row = out.get(h.teamId) ?? { allocatedGpus: 0, quotaGuaranteed: null, quotaLimit: null };
      row.allocatedGpus = Math.round(Number(h._sum.gpuUnits ?? 0) * 1000) / 1000;
      out.set(h.teamId, row);
    }
    return out;
  }

  /** GPUs allocated and idle since before `idleBefore`, with who holds them (caller's scope). */
  async idleAllocations(scope: TenantScope, idleBefore: Date, limit: number) {
    const db = this.prisma.client;
    const idle = await db.gpuTelemetry.findMany({
      where: { idleSince: { lte: idleBefore } },
      orderBy: { idleSince: 'asc' },
      select: { gpuId: true, smPct: true, idleSince: true },
    });
    if (!idle.length) return [];
    const allocations = await db.allocation.findMany({
      where: { AND: [{ gpuId: { in: idle.map((i) => i.gpuId) } }, { endedAt: null }, scopeWhere(scope, 'team-rows')] },
      select: {
        gpuId: true,
        tenantId: true,
        teamId: true,
        gpuUnits: true,
        gpuModel: true,
        job: { select: { id: true, name: true } },
        gpu: { select: { index: true, nodeId: true, node: { select: { name: true } } } },
      },
    });
    const teams = new Map(
      (await db.team.findMany({ where: { id: { in: [...new Set(allocations.map((a) => a.teamId))] } }, select: { id: true, name: true } })).map((t) => [
        t.id,
        t.name,
      ]),
    );
    const byGpu = new Map(idle.map((i) => [i.gpuId, i]));
    return allocations
      .map((a) => ({ a, t: byGpu.get(a.gpuId)! }))
      .sort((x, y) => x.t.idleSince!.getTime() - y.t.idleSince!.getTime() || Number(y.a.gpuUnits) - Number(x.a.gpuUnits))
      .slice(0, limit)
      .map(({ a, t }) => ({
        gpuId: a.gpuId,
        nodeId: a.gpu.nodeId,
        nodeName: a.gpu.node.name,
        gpuIndex: a.gpu.index,
        gpuModel: a.gpuModel,
        tenantId: a.tenantId,
        teamId: a.teamId,
        teamName: teams.get(a.teamId) ?? a.teamId,
        jobId: a.job?.id ?? null,
        jobName: a.job?.name ?? null,
        gpuUnits: Number(a.gpuUnits),
        smPct: t.smPct,
        idleSince: t.idleSince!,
      }));
  }

  /** Every GPU with its node, health, held part and latest sample (the heatmap). Hardware only: no tenant data. */
  async heatmap() {
    const db = this.prisma.client;
    const [nodes, gpus, latest, held, tick] = await Promise.all([
      db.node.findMany({ select: { id: true, name: true }, orderBy: { name: 'asc' } }),
      db.gpu.findMany({ select: { id: true, nodeId: true, index: true, model: true, health: true, memoryMiB: true } }),
      db.gpuTelemetry.findMany({ select: { gpuId: true, at: true, smPct: true, memoryUsedMiB: true, powerW: true } }),
      db.allocation.groupBy({ by: ['gpuId'], where: { endedAt: null }, _sum: { gpuUnits: true } }),
      // the newest tick (a GPU's latest row keeps the time its state was first sampled)
      this.prisma.sql.query<{ at: Date | null }>(`SELECT max("at") AS "at" FROM "TelemetryTick"`),
    ]);
    return { nodes, gpus, latest, held: held.map((h) => ({ gpuId: h.gpuId, units: Number(h._sum.gpuUnits ?? 0) })), newestTick: tick[0]?.at ?? null };
  }

  /** Power management: watt-seconds saved in [from, to), each span a node was off (clipped to the window) x its saved draw. */
  async savedWattSeconds(from: Date, to: Date): Promise<number> {
    const spans = await this.prisma.client.nodePowerOff.findMany({
      where: { startedAt: { lt: to }, OR: [{ endedAt: null }, { endedAt: { gt: from } }] },
      select: { startedAt: true, endedAt: true, savedW: true },
    });
    let ws = 0;
    for (const s of spans) {
      const a = Math.max(s.startedAt.getTime(), from.getTime());
      const b = Math.min((s.endedAt ?? to).getTime(), to.getTime());
      if (b > a) ws += ((b - a) / 1000) * s.savedW;
    }
    return ws;
  }
}

/**
 * How a report reads its rollup: `direct` when every rollup row is already one answer cell
 * (the step equals the rollup, and the rows that sum every node hold one row per team, GPU
 * model and bucket: a team belongs to one tenant, and the unallocated row, team '', is left
 * out), `rebucket` otherwise (the step is a multiple of the rollup, or several rows of a
 * bucket belong to one group: tenants hold several teams, models several holders, nodes
 * several holders). Both give the same sums.
 */
export function rollupPlan(groupBy: UtilizationGroupBy, stepSeconds: number, rollupSeconds: number): 'direct' | 'rebucket' {
  return groupBy === 'team' && stepSeconds === rollupSeconds ? 'direct' : 'rebucket';
}
