import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { logsOfMany } from '@gantry/driver';
import { JobLogsRepository, type CollectableJob, type StoredLine } from './job-logs.repository';

/** Jobs read per tick, and how long after its last event a job is still read (its last lines). */
export const JOBS_PER_TICK = 200;
const RECENT_SECONDS = 60;

export interface LogTickReport {
  jobs: number;
  lines: number;
}

/**
 * Worker (`logs` tick): reads from the driver what each job that may write wrote since the
 * newest line stored, and stores it. A replica whose log the cluster cannot give gets one
 * `gantry` line saying why (rewritten while it lasts), so the console never shows a silent void.
 */
@Injectable()
export class JobLogCollector {
  private readonly logger = new Logger('logs');
  /** Where the next tick goes on from (the last job id read; '' from the start). */
  private after = '';

  constructor(
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    private readonly repo: JobLogsRepository,
  ) {}

  /**
   * Up to JOBS_PER_TICK collectable jobs, round by round in id order: on from where the last tick
   * stopped, then from the start again, so that with more jobs than that each is read within a
   * few ticks (and none twice in one).
   */
  private async nextJobs(now: Date): Promise<CollectableJob[]> {
    const after = this.after;
    const first = await this.repo.collectable(now, RECENT_SECONDS, JOBS_PER_TICK, after);
    let jobs = first;
    let full = first.length === JOBS_PER_TICK;
    if (!full && after) {
      const room = JOBS_PER_TICK - first.length;
      const wrap = (await this.repo.collectable(now, RECENT_SECONDS, room, '')).filter((j) => j.id <= after);
      jobs = [...first, ...wrap];
      full = wrap.length === room;
    }
    this.after = full ? jobs[jobs.length - 1]!.id : '';
    return jobs;
  }

  async tick(now = new Date()): Promise<LogTickReport> {
    if (!this.driver.logs) return { jobs: 0, lines: 0 };
    const jobs = await this.nextJobs(now);
    // every job's new lines in one driver call, stored in one statement
    const read = await logsOfMany(
      this.driver,
      jobs.map((job) => ({ jobId: job.id, query: job.since ? { sinceMs: job.since.getTime() } : {} })),
    );
    const batch: { job: CollectableJob; lines: StoredLine[] }[] = [];
    for (const [i, job] of jobs.entries()) {
      const got = read[i];
      if (!got) {
        this.logger.warn(`could not read the log of job ${job.id}`);
        continue;
      }
      const notes: StoredLine[] = got.unavailable.map((u) => ({ at: now.getTime(), replica: u.replica, seq: -1, stream: 'gantry', text: u.reason }));
      batch.push({ job, lines: [...got.lines, ...notes] });
    }
    return { jobs: jobs.length, lines: await this.repo.appendMany(batch) };
  }
}
