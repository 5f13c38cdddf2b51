import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';
import { EventsRepository } from '../events/events.repository';
import type { JobKind, JobState, Tx } from '@gantry/db';
import { SYSTEM_SCOPE } from '../../common/tenant-scope';
import { releaseAllocations, SUSPENDABLE_KINDS } from '../jobs/jobs.repository';
import { newId } from '../../common/ids';

/** A job with what its start needs: its active allocations in (replica, GPU) order. */
export interface StartableJob {
  id: string;
  tenantId: string;
  version: number;
  state: JobState;
  kind: JobKind;
  durationSeconds: number | null;
  progressSeconds: number;
  checkpoint: string | null;
  runningSince: Date | null;
  allocations: {
    gpuId: string;
    replica: number;
    migProfile: string | null;
    migStart: number | null;
    milli: number;
    node: { name: string };
    gpu: { index: number };
  }[];
}

export interface ActiveJob {
  id: string;
  state: 'starting' | 'running' | 'suspending';
  progressSeconds: number;
  runningSince: Date | null;
  durationSeconds: number | null;
  placedAt: Date | null;
}

/** Job state transitions driven by the cluster (system-scoped: worker only). */
@Injectable()
export class LifecycleRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  async findWithAllocations(jobId: string): Promise<StartableJob | null> {
    return (await this.findManyWithAllocations([jobId]))[0] ?? null;
  }

  /**
   * Jobs with their active allocations (node name, GPU index), in one typed-SQL statement: the
   * starts of a scheduling cycle read 64 jobs at a time, on the path of every start.
   */
  findManyWithAllocations(jobIds: string[]): Promise<StartableJob[]> {
    if (!jobIds.length) return Promise.resolve([]);
    return this.prisma.sql.query<StartableJob>(
      `SELECT j."id", j."tenantId", j."version", j."state"::text AS "state", j."kind"::text AS "kind", j."durationSeconds",
         j."progressSeconds", j."checkpoint", j."runningSince",
         COALESCE((
           SELECT json_agg(json_build_object('gpuId', a."gpuId", 'replica', a."replica", 'migProfile', a."migProfile",
                    'migStart', a."migStart", 'milli', a."milli", 'node', json_build_object('name', n."name"),
                    'gpu', json_build_object('index', g."index")) ORDER BY a."replica", a."gpuId")
           FROM "Allocation" a JOIN "Node" n ON n."id" = a."nodeId" JOIN "Gpu" g ON g."id" = a."gpuId"
           WHERE a."jobId" = j."id" AND a."endedAt" IS NULL
         ), '[]'::json) AS "allocations"
       FROM "Job" j WHERE j."id" = ANY($1::text[])`,
      [jobIds],
    );
  }

  /**
   * markRunning of many jobs in one statement: those still starting move to running, each with
   * its event. Returns the ids that moved (the others were cancelled while starting).
   */
  async markRunningMany(jobIds: string[], now: Date): Promise<Set<string>> {
    if (!jobIds.length) return new Set();
    const rows = await this.prisma.sql.query<{ id: string }>(
      `WITH j AS (
         UPDATE "Job" SET "state" = 'running', "runningSince" = $2::timestamp(3), "startedAt" = COALESCE("startedAt", $2::timestamp(3)),
           "version" = "version" + 1
         WHERE "id" = ANY($1::text[]) AND "state" = 'starting'
         RETURNING "id", "tenantId"
       )
       INSERT INTO "Event" ("id", "tenantId", "jobId", "type", "message", "data")
       SELECT e.eid, j."tenantId", j."id", 'job.running', 'all replicas running', '{}'::jsonb
       FROM j JOIN unnest($1::text[], $3::text[]) AS e(jid, eid) ON e.jid = j."id"
       RETURNING "jobId" AS id`,
      [jobIds, now.toISOString(), jobIds.map(() => newId())],
    );
    return new Set(rows.map((r) => r.id));
  }

  /**
   * starting -> running, with its event, in one statement. False when the job is no longer
   * starting (cancelled meanwhile).
   */
  async markRunning(job: { id: string; tenantId: string }, now: Date): Promise<boolean> {
    const rows = await this.prisma.sql.query<{ id: string }>(
      `WITH j AS (
         UPDATE "Job" SET "state" = 'running', "runningSince" = $2::timestamp(3), "startedAt" = COALESCE("startedAt", $2::timestamp(3)),
           "version" = "version" + 1
         WHERE "id" = $1 AND "state" = 'starting'
         RETURNING "id", "tenantId"
       )
       INSERT INTO "Event" ("id", "tenantId", "jobId", "type", "message", "data")
       SELECT $3, j."tenantId", j."id", 'job.running', 'all replicas running', '{}'::jsonb FROM j
       RETURNING "jobId" AS id`,
      [job.id, now.toISOString(), newId()],
    );
    return rows.length === 1;
  }

  /**
   * starting|running|suspending -> succeeded|failed, releasing the GPUs and recording the event,
   * in one statement (atomic: the state condition is re-checked on the locked row, so a cancel
   * or a second exit racing it changes nothing twice). False when the job had already ended.
   */
  async finish(jobId: string, exitCode: number, now: Date): Promise<boolean> {
    return (await this.finishMany([{ jobId, exitCode }], now)).has(jobId);
  }

  /**
   * finish() of many jobs in one statement (the exits a worker heard within a few milliseconds):
   * each job still starting, running or suspending ends with its own exit code, its GPUs released
   * and its event written. Returns the ids this call ended (the others had already ended, or
   * were never active). A job named twice ends once, with its first exit code.
   */
  async finishMany(exits: readonly { jobId: string; exitCode: number }[], now: Date): Promise<Set<string>> {
    const first = new Map<string, number>();
    for (const e of exits) if (!first.has(e.jobId)) first.set(e.jobId, e.exitCode);
    if (!first.size) return new Set();
    const ids = [...first.keys()];
    const rows = await this.prisma.sql.query<{ id: string }>(
      `WITH x AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::text[]) AS x(id, code, eid)
       ), j AS (
         UPDATE "Job" AS job SET "state" = (CASE WHEN x.code = 0 THEN 'succeeded' ELSE 'failed' END)::"JobState",
           "finishedAt" = $4::timestamp(3), "runningSince" = NULL, "version" = job."version" + 1,
           "progressSeconds" = CASE WHEN x.code = 0 AND COALESCE(job."durationSeconds", 0) <> 0 THEN job."durationSeconds" ELSE job."progressSeconds" END,
           "reasons" = CASE WHEN x.code = 0 THEN '[]'::jsonb
             ELSE jsonb_build_array(jsonb_build_object('code', 'exit_code', 'message', 'a replica exited with code ' || x.code)) END
         FROM x
         WHERE job."id" = x.id AND job."state" IN ('running', 'starting', 'suspending')
         RETURNING job."id", job."tenantId", x.code, x.eid
       ), a AS (
         UPDATE "Allocation" SET "endedAt" = $4::timestamp(3), "activeSlot" = NULL
         WHERE "jobId" IN (SELECT "id" FROM j) AND "endedAt" IS NULL
         RETURNING "jobId"
       ), released AS (
         SELECT "jobId", count(*) AS n FROM a GROUP BY "jobId"
       )
       INSERT INTO "Event" ("id", "tenantId", "jobId", "type", "message", "data")
       SELECT j.eid, j."tenantId", j."id", CASE WHEN j.code = 0 THEN 'job.succeeded' ELSE 'job.failed' END,
         CASE WHEN j.code = 0 THEN 'completed' ELSE 'failed with exit code ' || j.code END
           || '; ' || COALESCE(released.n, 0) || ' GPU allocation(s) released', '{}'::jsonb
       FROM j LEFT JOIN released ON released."jobId" = j."id"
       RETURNING "jobId" AS id`,
      [ids, ids.map((id) => first.get(id)!), ids.map(() => newId()), now.toISOString()],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Of these jobs, those that have ended (succeeded or failed): what is left of their runs may be removed. */
  async ended(jobIds: readonly string[]): Promise<Set<string>> {
    if (!jobIds.length) return new Set();
    const rows = await this.prisma.sql.query<{ id: string }>(`SELECT "id" FROM "Job" WHERE "id" = ANY($1::text[]) AND "state" IN ('succeeded', 'failed')`, [
      jobIds,
    ]);
    return new Set(rows.map((r) => r.id));
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

  /**
   * Jobs the cluster should be running: the reconciler compares them with the driver. `placedAt`:
   * when the job's current GPUs were taken (its newest active allocation), null without any.
   */
  activeJobs(): Promise<ActiveJob[]> {
    return this.prisma.sql.query<ActiveJob>(
      `SELECT j."id", j."state"::text AS "state", j."progressSeconds", j."runningSince", j."durationSeconds",
         (SELECT max(a."startedAt") FROM "Allocation" a WHERE a."jobId" = j."id" AND a."endedAt" IS NULL) AS "placedAt"
       FROM "Job" j WHERE j."state" IN ('starting', 'running', 'suspending')
       LIMIT 10000`,
    );
  }

  countPending() {
    return this.prisma.client.job.count({ where: { state: 'pending' } });
  }
}
