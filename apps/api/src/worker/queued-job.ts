import { DelayedError, type Job } from 'bullmq';

/** What a processor may know of, and do with, the queued job it runs besides reading its payload. */
export interface QueuedJob {
  /** When a repeatable job's iteration was due (epoch ms; BullMQ names it `repeat:<scheduler>:<due>`); undefined for other jobs. */
  dueMs: number | undefined;
  /** Puts the job back, due in `ms`, for any worker to take (never returns: this run ends, neither done nor failed). */
  stepAside(ms: number): Promise<never>;
}

export function queuedJob(job: Pick<Job, 'id' | 'moveToDelayed'>, token: string | undefined): QueuedJob {
  return {
    dueMs: dueOf(job.id),
    async stepAside(ms: number): Promise<never> {
      await job.moveToDelayed(Date.now() + ms, token);
      throw new DelayedError();
    },
  };
}

/** The due time a job scheduler's iteration carries in its id, if any. */
export function dueOf(jobId: string | undefined): number | undefined {
  const m = jobId ? /^repeat:.+:(\d+)$/.exec(jobId) : null;
  return m ? Number(m[1]) : undefined;
}
