import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import type { Reason } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
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
        tenantId: true,
        teamId: true,
        kind: true,
        priority: true,
        createdAt: true,
        replicas: true,
        resources: true,
        topologyLevel: true,
        topologyRequired: true,
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

  /**
   * Step 6, commit: the job moves pending -> starting and takes its GPU slots, all or nothing.
   * A slot someone else took meanwhile (unique active slot), a share that would pass 1000
   * thousandths, or a job changed meanwhile (version) aborts the whole decision.
   */
  async commitPlacement(job: { id: string; tenantId: string; teamId: string; version: number }, allocs: NewAllocation[], summary: string): Promise<boolean> {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        const moved = await tx.job.updateMany({
          where: { id: job.id, state: 'pending', version: job.version },
          data: { state: 'starting', version: { increment: 1 }, reasons: [] },
        });
        if (moved.count !== 1) return false;
        for (const a of allocs.filter((x) => x.milli < 1000 && !x.migProfile)) {
          // Shares: lock the GPU row, then check the sum under the lock.
          const [gpu] = await tx.$queryRaw<{ mode: string }[]>`SELECT mode::text AS mode FROM "Gpu" WHERE id = ${a.gpuId} FOR UPDATE`;
          if (a.makeShared) {
            const busy = await tx.allocation.count({ where: { gpuId: a.gpuId, endedAt: null } });
            if (gpu?.mode !== 'whole' || busy > 0) throw new Abort();
            await tx.gpu.update({ where: { id: a.gpuId }, data: { mode: 'shared', version: { increment: 1 } } });
          } else if (gpu?.mode !== 'shared') throw new Abort();
          const used = await tx.allocation.aggregate({ where: { gpuId: a.gpuId, endedAt: null }, _sum: { milli: true } });
          if ((used._sum.milli ?? 0) + a.milli > 1000) throw new Abort();
        }
        await tx.allocation.createMany({
          data: allocs.map((a) => ({
            tenantId: job.tenantId,
            teamId: job.teamId,
            jobId: job.id,
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
            activeSlot: a.migProfile ? `${a.gpuId}:mig:${a.migStart}` : a.milli >= 1000 ? `${a.gpuId}:whole` : null,
          })),
        });
        await this.events.append(tx, { tenantId: job.tenantId, jobId: job.id, type: 'job.placed', message: summary });
        return true;
      });
    } catch (e) {
      if (e instanceof Abort || isUniqueViolation(e)) return false;
      throw e;
    }
  }

  /** Step 7, explain: stores the reasons of jobs left pending (only those that changed). */
  async setReasons(updates: { jobId: string; reasons: Reason[] }[]): Promise<void> {
    for (const u of updates) {
      await this.prisma.client.job.updateMany({
        where: { id: u.jobId, state: 'pending' },
        data: { reasons: u.reasons as unknown as Prisma.InputJsonValue },
      });
    }
  }
}

class Abort extends Error {}
