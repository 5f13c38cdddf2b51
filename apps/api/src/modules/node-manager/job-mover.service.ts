import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import { NodeJobsRepository, type ActiveJob } from './node-jobs.repository';

/**
 * Moves jobs off hardware (failover, drains, persona switches): checkpoint those still running
 * when allowed, stop every replica (a gang moves as a whole), return each job to `pending` with
 * its progress, checkpoint and reason, and ask for a scheduling cycle to place them elsewhere.
 */
@Injectable()
export class JobMover {
  constructor(
    private readonly nodeJobs: NodeJobsRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The jobs actually moved (a job that ended or moved meanwhile is skipped). */
  async move(
    jobs: Pick<ActiveJob, 'id' | 'tenantId' | 'progressSeconds' | 'runningSince' | 'nodeIds'>[],
    opts: { checkpoint: boolean; code: string; message: string },
  ) {
    if (!jobs.length) return [];
    const now = new Date();
    const moved = (
      await Promise.all(
        jobs.map(async (job) => {
          const progress = await this.progressOf(job, opts.checkpoint);
          await this.driver.stop(job.id).catch(() => undefined);
          return (await this.nodeJobs.requeueJob(job.id, { code: opts.code, message: opts.message }, progress, now)) ? job : null;
        }),
      )
    ).filter((j): j is NonNullable<typeof j> => j !== null);
    if (moved.length) await this.queues.requestSchedule(`${opts.code}: ${moved.length} job(s) rescheduled`);
    return moved;
  }

  /** Progress to keep: a fresh checkpoint when the job still runs (and may), else what the driver saw. */
  private async progressOf(
    job: Pick<ActiveJob, 'id' | 'progressSeconds' | 'runningSince'>,
    checkpoint: boolean,
  ): Promise<{ progressSeconds: number; checkpoint?: string | null }> {
    const status = await this.driver.status(job.id).catch(() => ({ state: 'unknown' as const, progressSeconds: 0, starting: undefined }));
    if (checkpoint && status.state === 'running' && !status.starting) {
      try {
        const cp = await this.driver.suspend(job.id);
        return { progressSeconds: cp.progressSeconds, checkpoint: cp.checkpoint };
      } catch {
        // the job ended meanwhile: keep what the driver saw
      }
    }
    if (status.state !== 'unknown') return { progressSeconds: status.progressSeconds };
    const elapsed = job.runningSince ? ((Date.now() - job.runningSince.getTime()) / 1000) * this.config.driver.simSpeed : 0;
    return { progressSeconds: job.progressSeconds + elapsed };
  }
}
