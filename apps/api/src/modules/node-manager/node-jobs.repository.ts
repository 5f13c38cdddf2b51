import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';
import { EventsRepository } from '../events/events.repository';
import { SYSTEM_SCOPE } from '../../common/tenant-scope';
import { releaseAllocations } from '../jobs/jobs.repository';

const ACTIVE = { endedAt: null } as const;
const RUNNING_STATES = ['starting', 'running'] as const;

export interface ActiveJob {
  id: string;
  tenantId: string;
  state: string;
  kind: string;
  progressSeconds: number;
  runningSince: Date | null;
  checkpoint: string | null;
  /** Nodes the job's replicas hold GPUs on (a gang over several nodes is multi-node work). */
  nodeIds: string[];
}

/**
 * The jobs on a node's hardware, for moving them off it (failover, drains, persona switches):
 * job rows are moved by id on behalf of the cluster, never read for a tenant.
 */
@Injectable()
export class NodeJobsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  private get db() {
    return this.prisma.client;
  }

  /** Jobs holding GPUs on a node (or one GPU of it), with every node each job spans. */
  async activeJobsOn(where: { nodeId: string; gpuId?: string }): Promise<ActiveJob[]> {
    const allocs = await this.db.allocation.findMany({
      where: { AND: [ACTIVE, { nodeId: where.nodeId }, where.gpuId ? { gpuId: where.gpuId } : {}, { jobId: { not: null } }] },
      select: { jobId: true },
      distinct: ['jobId'],
    });
    const ids = allocs.map((a) => a.jobId!);
    if (!ids.length) return [];
    const jobs = await this.db.job.findMany({
      where: { id: { in: ids } },
      select: {
        id: true,
        tenantId: true,
        state: true,
        kind: true,
        progressSeconds: true,
        runningSince: true,
        checkpoint: true,
        allocations: { where: ACTIVE, select: { nodeId: true } },
      },
      orderBy: { id: 'asc' },
    });
    return jobs.map(({ allocations, ...j }) => ({ ...j, nodeIds: [...new Set(allocations.map((a) => a.nodeId))] }));
  }

  /** Job allocations still on a node (endpoint replicas are the endpoints module's to move). */
  countActiveAllocationsOnNode(nodeId: string) {
    return this.db.allocation.count({ where: { nodeId, endedAt: null, jobId: { not: null } } });
  }

  findJob(jobId: string) {
    return this.db.job.findUnique({
      where: { id: jobId },
      select: {
        id: true,
        tenantId: true,
        state: true,
        progressSeconds: true,
        runningSince: true,
        checkpoint: true,
        allocations: { where: ACTIVE, select: { nodeId: true, gpuId: true, startedAt: true } },
      },
    });
  }

  /**
   * Returns a job the cluster took away (or that failover moves) to `pending`: all its replicas
   * at once (a gang moves as a whole), its GPUs released in the same transaction, its progress
   * and checkpoint kept, the reason recorded. The normal scheduling cycle places it again.
   * State-checked: false when the job is no longer starting or running.
   */
  requeueJob(
    jobId: string,
    reason: { code: string; message: string },
    progress: { progressSeconds: number; checkpoint?: string | null },
    now: Date,
  ): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      const job = await tx.job.findUnique({ where: { id: jobId } });
      if (!job || !(RUNNING_STATES as readonly string[]).includes(job.state)) return false;
      const moved = await tx.job.updateMany({
        where: { id: jobId, state: { in: [...RUNNING_STATES] } },
        data: {
          state: 'pending',
          runningSince: null,
          version: { increment: 1 },
          progressSeconds: Math.max(job.progressSeconds, progress.progressSeconds),
          ...(progress.checkpoint ? { checkpoint: progress.checkpoint } : {}),
          reasons: [{ code: reason.code, message: reason.message }],
        },
      });
      if (moved.count !== 1) return false;
      const released = await releaseAllocations(tx, SYSTEM_SCOPE, jobId, now);
      await this.events.append(tx, {
        tenantId: job.tenantId,
        jobId,
        type: 'job.rescheduled',
        message: `${reason.message}; ${released} GPU allocation(s) released, progress ${Math.round(Math.max(job.progressSeconds, progress.progressSeconds))} s kept${progress.checkpoint ? ' (checkpoint)' : ''}`,
        data: { code: reason.code },
      });
      return true;
    });
  }

  /**
   * When every job of the list was running again (the latest runningSince), or had ended;
   * null while one still waits. An empty list is mitigated now.
   */
  async jobsBackAt(jobIds: string[]): Promise<Date | null> {
    if (!jobIds.length) return new Date();
    const jobs = await this.db.job.findMany({ where: { id: { in: jobIds } }, select: { state: true, runningSince: true, finishedAt: true } });
    let latest = 0;
    for (const j of jobs) {
      if (j.state === 'running' && j.runningSince) latest = Math.max(latest, j.runningSince.getTime());
      else if (['succeeded', 'failed', 'cancelled'].includes(j.state) && j.finishedAt) latest = Math.max(latest, j.finishedAt.getTime());
      else return null;
    }
    return new Date(latest || Date.now());
  }
}
