import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import type { Reason } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
import { crashPoint } from '../../common/crash-points';
import { Abort, takeGpuSlots, type NewAllocation } from '../allocations/gpu-slots';
import { withinQuota, type QuotaGuard } from '../quotas/quota-guard';
import { EventsRepository } from '../events/events.repository';

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
        durationSeconds: true,
        progressSeconds: true,
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
    return Object.fromEntries(
      rows.map((r) => [r.teamId, { gpus: Number(r._sum.gpuUnits ?? 0), cpuMilli: r._sum.cpuMilli ?? 0, memoryMiB: r._sum.memoryMiB ?? 0 }]),
    );
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
        select: {
          id: true,
          tenantId: true,
          teamId: true,
          state: true,
          priority: true,
          preemptible: true,
          requeueOnSuspend: true,
          startedAt: true,
          createdAt: true,
        },
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
