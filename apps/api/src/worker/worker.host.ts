import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Worker } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { QUEUE_NAMES } from '../queues/queue-names';
import { QUEUE_PROCESSORS, type QueueProcessor } from './processor';
import { queuedJob } from './queued-job';

/** Lock of an active job (renewed while it runs) and how often stalled jobs are looked for. */
export const STALL_LOCK_MS = 10_000;
export const STALL_CHECK_MS = 5_000;

/**
 * Consumer side: one BullMQ worker per queue. Boot fails when a queue has no processor or
 * two, so that no queue silently fills up.
 */
@Injectable()
export class WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('worker');
  private workers: Worker[] = [];

  constructor(
    @Inject(QUEUE_PROCESSORS) private readonly processors: QueueProcessor[],
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    checkProcessors(this.processors);
    const connection = { ...this.config.redis, maxRetriesPerRequest: null };
    this.workers = this.processors.map((p) => {
      const w = new Worker(p.queue, (job, token) => p.process(job.data, queuedJob(job, token)), {
        connection,
        prefix: this.config.queuePrefix,
        concurrency: p.concurrency,
        // A worker killed mid-job (kill -9, OOM, a lost node) holds its jobs until the lock
        // expires; the `schedule` job is deduplicated, so no cycle runs meanwhile. Short locks
        // (renewed every lockDuration / 2 while the job runs) and frequent stalled checks hand
        // them to a live worker within seconds; a job stalled more than maxStalledCount times
        // fails, and the reconcilers re-derive its work from Postgres.
        lockDuration: STALL_LOCK_MS,
        stalledInterval: STALL_CHECK_MS,
        maxStalledCount: 5,
      });
      w.on('failed', (job, err) => this.logger.warn(`${p.queue} ${job?.name ?? ''} ${job?.id ?? ''} failed: ${err.message}`));
      w.on('error', (err) => this.logger.error(`${p.queue}: ${err.message}`));
      return w;
    });
    this.logger.log(`consuming ${this.processors.map((p) => p.queue).join(', ')}`);
  }

  /**
   * Stops consuming before Postgres and Redis connections close (they close in the last
   * shutdown phase). Active jobs get the shutdown grace to finish; past it the workers close
   * without waiting, their locks lapse, and another worker re-runs the jobs (every processor
   * is idempotent) or the reconciler re-derives their work.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const graceMs = this.config.shutdownGraceSeconds * 1000;
    await Promise.all(
      this.workers.map(async (w) => {
        let timer: NodeJS.Timeout | undefined;
        const graceful = w.close().then(() => 'closed' as const);
        const lapsed = new Promise<'lapsed'>((r) => (timer = setTimeout(() => r('lapsed'), graceMs)));
        const how = await Promise.race([graceful, lapsed]);
        clearTimeout(timer);
        if (how === 'lapsed') {
          this.logger.warn(`${w.name}: active jobs still running after ${graceMs} ms of shutdown grace; closing without them`);
          await w.close(true);
        }
      }),
    );
  }
}

export function checkProcessors(processors: QueueProcessor[]): void {
  for (const name of QUEUE_NAMES) {
    const n = processors.filter((p) => p.queue === name).length;
    if (n !== 1) throw new Error(`queue "${name}" has ${n} processors; exactly one is required`);
  }
}
