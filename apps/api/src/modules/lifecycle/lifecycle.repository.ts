import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';
import { EventsRepository } from '../events/events.repository';
import type { Tx } from '@gantry/db';
import { SYSTEM_SCOPE } from '../../common/tenant-scope';
import { releaseAllocations, SUSPENDABLE_KINDS } from '../jobs/jobs.repository';

/** Job state transitions driven by the cluster (system-scoped: worker only). */
@Injectable()
export class LifecycleRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  findWithAllocations(jobId: string) {
    return this.prisma.client.job.findUnique({
      where: { id: jobId },
      include: {
        allocations: {
          where: { endedAt: null },
          orderBy: [{ replica: 'asc' }, { gpuId: 'asc' }],
          include: { node: { select: { name: true } }, gpu: { select: { index: true } } },
        },
      },
    });
  }

  /** starting -> running. False when the job is no longer starting (cancelled meanwhile). */
  markRunning(job: { id: string; tenantId: string }, now: Date): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.job.updateMany({
        where: { id: job.id, state: 'starting' },
        data: { state: 'running', runningSince: now, version: { increment: 1 } },
      });
      if (r.count !== 1) return false;
      await tx.job.updateMany({ where: { id: job.id, startedAt: null }, data: { startedAt: now } });
      await this.events.append(tx, { tenantId: job.tenantId, jobId: job.id, type: 'job.running', message: 'all replicas running' });
      return true;
    });
  }

  /** starting|running|suspending -> succeeded|failed, releasing the GPUs in the same transaction. */
  finish(jobId: string, exitCode: number, now: Date): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const job = await tx.job.findUnique({ where: { id: jobId } });
      if (!job || !['running', 'starting', 'suspending'].includes(job.state)) return false;
      const ok = exitCode === 0;
      await tx.job.update({
        where: { id: jobId },
        data: {
          state: ok ? 'succeeded' : 'failed',
          finishedAt: now,
          runningSince: null,
          version: { increment: 1 },
          ...(ok && job.durationSeconds ? { progressSeconds: job.durationSeconds } : {}),
          reasons: ok ? [] : [{ code: 'exit_code', message: `a replica exited with code ${exitCode}` }],
        },
      });
      const released = await releaseAllocations(tx, SYSTEM_SCOPE, jobId, now);
      await this.events.append(tx, {
        tenantId: job.tenantId,
        jobId,
        type: ok ? 'job.succeeded' : 'job.failed',
        message: `${ok ? 'completed' : `failed with exit code ${exitCode}`}; ${released} GPU allocation(s) released`,
      });
      return true;
    });
  }

  /**
   * suspending -> suspended: keeps the progress and checkpoint, releases the GPUs in the same
   * transaction (they are free for others from here on).
   */
  markSuspended(jobId: string, checkpoint: { checkpoint: string | null; progressSeconds: number }, now: Date): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const job = await tx.job.findUnique({ where: { id: jobId } });
      if (!job || job.state !== 'suspending') return false;
      if (job.requeueOnSuspend) return this.requeuePreempted(tx, job, checkpoint, now);
      await tx.job.update({
        where: { id: jobId },
        data: {
          state: 'suspended',
          runningSince: null,
          progressSeconds: checkpoint.progressSeconds,
          checkpoint: checkpoint.checkpoint,
          version: { increment: 1 },
          reasons: [{ code: 'suspended', message: 'suspended by the user; resume to requeue it with its checkpoint' }],
        },
      });
      const released = await releaseAllocations(tx, SYSTEM_SCOPE, jobId, now);
      const pct = job.durationSeconds ? ` (${Math.round((100 * checkpoint.progressSeconds) / job.durationSeconds)}% done)` : '';
      await this.events.append(tx, {
        tenantId: job.tenantId,
        jobId,
        type: 'job.suspended',
        message: `checkpointed at ${Math.round(checkpoint.progressSeconds)} s of progress${pct}; ${released} GPU allocation(s) released`,
      });
      return true;
    });
  }

  /**
   * The end of a preemption: the same checkpoint-and-release as a suspend, but the job goes back
   * to `pending` (requeued) instead of `suspended`. A kind that cannot be checkpointed (batch)
   * starts over.
   */
  private async requeuePreempted(
    tx: Tx,
    job: { id: string; tenantId: string; kind: string; durationSeconds: number | null },
    checkpoint: { checkpoint: string | null; progressSeconds: number },
    now: Date,
  ): Promise<boolean> {
    const keeps = (SUSPENDABLE_KINDS as readonly string[]).includes(job.kind);
    const progress = keeps ? checkpoint.progressSeconds : 0;
    const kept = keeps
      ? `requeued with its checkpoint at ${Math.round(progress)} s of progress`
      : 'requeued; a batch job cannot be checkpointed and starts over';
    await tx.job.update({
      where: { id: job.id },
      data: {
        state: 'pending',
        requeueOnSuspend: false,
        runningSince: null,
        progressSeconds: progress,
        checkpoint: keeps ? checkpoint.checkpoint : null,
        version: { increment: 1 },
        reasons: [{ code: 'preempted', message: `preempted; ${kept}` }],
      },
    });
    const released = await releaseAllocations(tx, SYSTEM_SCOPE, job.id, now);
    await this.events.append(tx, {
      tenantId: job.tenantId,
      jobId: job.id,
      type: 'job.requeued',
      message: `preempted: ${kept}; ${released} GPU allocation(s) released`,
    });
    return true;
  }

  /**
   * starting -> pending when the cluster refused the placement: GPUs released in the same
   * transaction, reason recorded. Version-guarded: a job moved or placed again meanwhile is left alone.
   */
  requeueRefused(job: { id: string; tenantId: string; version: number }, message: string, now: Date): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.job.updateMany({
        where: { id: job.id, state: 'starting', version: job.version },
        data: { state: 'pending', runningSince: null, version: { increment: 1 }, reasons: [{ code: 'start_refused', message }] },
      });
      if (r.count !== 1) return false;
      const released = await releaseAllocations(tx, SYSTEM_SCOPE, job.id, now);
      await this.events.append(tx, {
        tenantId: job.tenantId,
        jobId: job.id,
        type: 'job.requeued',
        message: `${message}; ${released} GPU allocation(s) released`,
      });
      return true;
    });
  }

  /** Jobs the cluster should be running: the reconciler compares them with the driver. */
  activeJobs() {
    return this.prisma.client.job.findMany({
      where: { state: { in: ['starting', 'running', 'suspending'] } },
      select: { id: true, state: true, progressSeconds: true, runningSince: true, durationSeconds: true },
      take: 10_000,
    });
  }

  countPending() {
    return this.prisma.client.job.count({ where: { state: 'pending' } });
  }
}
