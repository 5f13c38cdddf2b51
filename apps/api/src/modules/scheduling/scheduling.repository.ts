import { Injectable } from '@nestjs/common';
import { Prisma, type Tx } from '@gantry/db';
import type { Reason } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
import { crashPoint } from '../../common/crash-points';
import { activeSlotKey } from '../allocations/active-slot';
import { EventsRepository } from '../events/events.repository';

export interface NewAllocation {
  replica: number;
  nodeId: string;
  gpuId: string;
  gpuModel: string;
  migProfile?: string;
  migStart?: number;
  milli: number;
  gpuUnits: number;
  cpuMilli: number;
  memoryMiB: number;
  /** Turns an idle whole GPU into a shared one as part of this commit. */
  makeShared?: boolean;
}

/**
 * The scheduling cycle's reads and writes. The cycle acts for the whole cluster, so these
 * methods are system-scoped: only the worker calls them, never a route.
 */
@Injectable()
export class SchedulingRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  pendingJobs(limit = 5000) {
    return this.prisma.client.job.findMany({
      where: { state: 'pending' },
      select: {
        id: true,
        name: true,
        tenantId: true,
        teamId: true,
        kind: true,
        priority: true,
        createdAt: true,
        replicas: true,
        resources: true,
        topologyLevel: true,
        topologyRequired: true,
        preemptible: true,
        reasons: true,
        version: true,
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit,
    });
  }

  /** GPU units in use per team and GPU model. */
  async usage(): Promise<{ teamId: string; gpuModel: string; units: number }[]> {
    const rows = await this.prisma.client.allocation.groupBy({
      by: ['teamId', 'gpuModel'],
      where: { endedAt: null },
      _sum: { gpuUnits: true },
    });
    return rows.map((r) => ({ teamId: r.teamId, gpuModel: r.gpuModel, units: Number(r._sum.gpuUnits ?? 0) }));
  }

  quotas(teamIds: string[]) {
    return this.prisma.client.quota.findMany({ where: { teamId: { in: teamIds } } });
  }

  /** Every team of the tenants these teams belong to (the cohorts), with quotas, weights and tenant totals. */
  async quotaContext(teamIds: string[]) {
    const tenants = await this.prisma.client.team.findMany({ where: { id: { in: teamIds } }, select: { tenantId: true }, distinct: ['tenantId'] });
    return this.prisma.client.team.findMany({
      where: { tenantId: { in: tenants.map((t) => t.tenantId) } },
      select: { id: true, tenantId: true, weight: true, tenant: { select: { gpuTotal: true } }, quotas: true },
    });
  }

  /** Resources each team holds now (the engine's dominant-resource fair share input). */
  async fairShareUsage(): Promise<Record<string, { gpus: number; cpuMilli: number; memoryMiB: number }>> {
    const rows = await this.prisma.client.allocation.groupBy({
      by: ['teamId'],
      where: { endedAt: null },
      _sum: { gpuUnits: true, cpuMilli: true, memoryMiB: true },
    });
    return Object.fromEntries(rows.map((r) => [r.teamId, { gpus: Number(r._sum.gpuUnits ?? 0), cpuMilli: r._sum.cpuMilli ?? 0, memoryMiB: r._sum.memoryMiB ?? 0 }]));
  }

  /** GPU-hours per team inside [start, end) (budgets). */
  async gpuHoursByTeam(teamIds: string[], start: Date, end: Date, now: Date): Promise<Map<string, number>> {
    if (!teamIds.length) return new Map();
    const rows = await this.prisma.client.$queryRaw<{ teamId: string; h: number | null }[]>`
      SELECT "teamId", SUM("gpuUnits"::float8 * EXTRACT(EPOCH FROM (LEAST(COALESCE("endedAt", ${now}::timestamp), ${end}::timestamp) - GREATEST("startedAt", ${start}::timestamp)))) / 3600 AS h
      FROM "Allocation"
      WHERE "teamId" IN (${Prisma.join(teamIds)}) AND "startedAt" < ${end}::timestamp AND ("endedAt" IS NULL OR "endedAt" > ${start}::timestamp)
      GROUP BY "teamId"`;
    return new Map(rows.map((r) => [r.teamId, Math.max(0, Number(r.h ?? 0))]));
  }

  /** Running jobs with the GPU units they hold (preemption candidates), and jobs being preempted. */
  async runningJobs() {
    const [jobs, units] = await Promise.all([
      this.prisma.client.job.findMany({
        where: { state: { in: ['running', 'suspending'] } },
        select: { id: true, tenantId: true, teamId: true, state: true, priority: true, preemptible: true, requeueOnSuspend: true, startedAt: true, createdAt: true },
        take: 20_000,
      }),
      this.prisma.client.allocation.groupBy({ by: ['jobId'], where: { endedAt: null, jobId: { not: null } }, _sum: { gpuUnits: true } }),
    ]);
    const byJob = new Map(units.map((u) => [u.jobId!, Number(u._sum.gpuUnits ?? 0)]));
    return jobs.map((j) => ({ ...j, units: byJob.get(j.id) ?? 0 }));
  }

  /**
   * Preemption: running -> suspending with `requeueOnSuspend`, so that the lifecycle's suspend
   * (checkpoint through the driver, GPUs released) ends in `pending` instead of `suspended`.
   * The state condition makes it safe against the job finishing or being cancelled meanwhile.
   */
  async preempt(victim: { id: string; tenantId: string }, message: string): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.job.updateMany({
        where: { id: victim.id, state: 'running', preemptible: true },
        data: {
          state: 'suspending',
          requeueOnSuspend: true,
          version: { increment: 1 },
          reasons: [{ code: 'preempted', message }] as unknown as Prisma.InputJsonValue,
        },
      });
      if (r.count !== 1) return false;
      await this.events.append(tx, { tenantId: victim.tenantId, jobId: victim.id, type: 'job.preempted', message });
      return true;
    });
  }

  /**
   * Step 6, commit: the job moves pending -> starting and takes its GPU slots, all or nothing.
   * A slot someone else took meanwhile (unique active slot), a share that would pass 1000
   * thousandths, or a job changed meanwhile (version) aborts the whole decision.
   */
  async commitPlacement(
    job: { id: string; tenantId: string; teamId: string; version: number },
    allocs: NewAllocation[],
    summary: string,
    guard?: QuotaGuard,
  ): Promise<boolean> {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        if (guard && !(await withinQuota(tx, job, allocs, guard))) return false;
        const moved = await tx.job.updateMany({
          where: { id: job.id, state: 'pending', version: job.version },
          data: { state: 'starting', version: { increment: 1 }, reasons: [] },
        });
        if (moved.count !== 1) return false;
        await takeGpuSlots(tx, { tenantId: job.tenantId, teamId: job.teamId, jobId: job.id }, allocs);
        await this.events.append(tx, { tenantId: job.tenantId, jobId: job.id, type: 'job.placed', message: summary });
        crashPoint('placement.commit');
        return true;
      });
    } catch (e) {
      if (e instanceof Abort || isUniqueViolation(e)) return false;
      throw e;
    }
  }

  /** Step 7, explain: stores the reasons of jobs left pending (only those that changed). */
  async setReasons(updates: { jobId: string; reasons: Reason[] }[]): Promise<void> {
    // One statement per 500 jobs: a long queue whose reasons all change (quota figures move
    // with every placement) costs a few round trips, not one per job.
    for (let i = 0; i < updates.length; i += 500) {
      const rows = updates.slice(i, i + 500).map((u) => Prisma.sql`(${u.jobId}, ${JSON.stringify(u.reasons)})`);
      await this.prisma.client.$executeRaw`
        UPDATE "Job" AS j SET reasons = v.r::jsonb
        FROM (VALUES ${Prisma.join(rows)}) AS v(id, r)
        WHERE j.id = v.id AND j.state = 'pending'`;
    }
  }
}

/** A GPU slot or share taken meanwhile: the caller's transaction rolls back. */
export class Abort extends Error {}

/** The quota rows a commit must respect: the team's limits and the tenant total. */
export interface QuotaGuard {
  limits: { gpuModel: string; limit: number }[];
  tenantTotal: number | null;
}

/**
 * The admission decision re-checked inside the commit's transaction, under advisory locks on the
 * team (and the tenant when it has a total): however many commits race, the team never passes
 * its limit and the tenant never passes its total. Locks are taken first, team then tenant.
 * `limits` are the rows covering the work (quota-coverage); none: no quota covers it, refused.
 */
export async function withinQuota(tx: Tx, job: { tenantId: string; teamId: string }, allocs: NewAllocation[], guard: QuotaGuard): Promise<boolean> {
  if (!guard.limits.length) return false;
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${'quota-team:' + job.teamId}))`;
  if (guard.tenantTotal !== null) await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${'quota-tenant:' + job.tenantId}))`;
  const held = await tx.allocation.groupBy({ by: ['gpuModel'], where: { teamId: job.teamId, endedAt: null }, _sum: { gpuUnits: true } });
  const heldBy = new Map(held.map((h) => [h.gpuModel, Number(h._sum.gpuUnits ?? 0)]));
  const adding = new Map<string, number>();
  for (const a of allocs) adding.set(a.gpuModel, (adding.get(a.gpuModel) ?? 0) + a.gpuUnits);
  const sum = (m: Map<string, number>, model: string) => (model === '*' ? [...m.values()].reduce((s, n) => s + n, 0) : (m.get(model) ?? 0));
  for (const l of guard.limits) {
    const add = sum(adding, l.gpuModel);
    if (add > 0 && sum(heldBy, l.gpuModel) + add > l.limit + 1e-6) return false;
  }
  if (guard.tenantTotal !== null) {
    const t = await tx.allocation.aggregate({ where: { tenantId: job.tenantId, endedAt: null }, _sum: { gpuUnits: true } });
    if (Number(t._sum.gpuUnits ?? 0) + sum(adding, '*') > guard.tenantTotal + 1e-6) return false;
  }
  return true;
}

/**
 * Takes the GPU slots of a placement inside the caller's transaction (jobs and endpoint
 * replicas alike): shares are checked under a row lock on the GPU, whole GPUs and MIG slices
 * by the unique active slot. Throws Abort (or a unique violation) when a slot is gone.
 */
export async function takeGpuSlots(
  tx: Tx,
  owner: { tenantId: string; teamId: string; jobId?: string; endpointId?: string },
  allocs: NewAllocation[],
): Promise<void> {
  // Every GPU of the placement, locked in id order: a MIG change or another commit on the same
  // GPU waits for this transaction, and this one sees what they committed (schedulable, mode).
  const gpuIds = [...new Set(allocs.map((a) => a.gpuId))].sort();
  const locked = await tx.$queryRaw<{ id: string; mode: string; schedulable: boolean }[]>`
    SELECT id, mode::text AS mode, schedulable FROM "Gpu" WHERE id IN (${Prisma.join(gpuIds)}) ORDER BY id FOR UPDATE`;
  const gpus = new Map(locked.map((g) => [g.id, g]));
  const migAllocs = allocs.filter((a) => a.migProfile);
  const slices = migAllocs.length
    ? await tx.gpuInstance.findMany({ where: { gpuId: { in: [...new Set(migAllocs.map((a) => a.gpuId))] } }, select: { gpuId: true, profile: true, start: true } })
    : [];
  for (const a of allocs) {
    const g = gpus.get(a.gpuId);
    // A GPU taken out of scheduling since the snapshot (a MIG change, a fault) or whose mode
    // changed meanwhile cannot take this slot: the driver would refuse it.
    if (!g || !g.schedulable) throw new Abort();
    if (a.migProfile) {
      if (g.mode !== 'mig' || !slices.some((s) => s.gpuId === a.gpuId && s.profile === a.migProfile && s.start === a.migStart)) throw new Abort();
    } else if (a.milli >= 1000 && g.mode !== 'whole') throw new Abort();
  }
  for (const a of allocs.filter((x) => x.milli < 1000 && !x.migProfile)) {
    // Shares: the GPU row is locked; check the sum under the lock.
    const gpu = gpus.get(a.gpuId)!;
    if (a.makeShared && gpu.mode === 'whole') {
      // The first share turns an idle whole GPU into a shared one.
      const busy = await tx.allocation.count({ where: { gpuId: a.gpuId, endedAt: null } });
      if (busy > 0) throw new Abort();
      await tx.gpu.update({ where: { id: a.gpuId }, data: { mode: 'shared', version: { increment: 1 } } });
      gpu.mode = 'shared';
    }
    // A GPU another share of this cycle made shared meanwhile takes this one too (within 1000).
    if (gpu.mode !== 'shared') throw new Abort();
    const used = await tx.allocation.aggregate({ where: { gpuId: a.gpuId, endedAt: null }, _sum: { milli: true } });
    if ((used._sum.milli ?? 0) + a.milli > 1000) throw new Abort();
  }
  await tx.allocation.createMany({
    data: allocs.map((a) => ({
      tenantId: owner.tenantId,
      teamId: owner.teamId,
      jobId: owner.jobId ?? null,
      endpointId: owner.endpointId ?? null,
      replica: a.replica,
      nodeId: a.nodeId,
      gpuId: a.gpuId,
      gpuModel: a.gpuModel,
      migProfile: a.migProfile ?? null,
      migStart: a.migStart ?? null,
      milli: a.milli,
      gpuUnits: new Prisma.Decimal(a.gpuUnits.toFixed(4)),
      cpuMilli: a.cpuMilli,
      memoryMiB: a.memoryMiB,
      activeSlot: activeSlotKey(a),
    })),
  });
}
