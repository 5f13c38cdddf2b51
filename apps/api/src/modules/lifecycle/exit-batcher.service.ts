import { Injectable, Logger } from '@nestjs/common';
import { MicroBatch } from '../../common/micro-batch';
import { QueuesService } from '../../queues/queues.service';
import { LifecycleService } from './lifecycle.service';

/**
 * How long the exits a worker hears are collected before they are recorded together, and at most
 * how many. Jobs end at random moments: at 60 exits a second a 20 ms window held one or two, so
 * each worker paid a statement, an `ended` read, a driver call and a schedule request per exit.
 * 100 ms holds several; an ended job's GPUs are free 0.1 s later (the next cycle is up to 0.5 s
 * away under load in any case).
 */
export const EXIT_WINDOW_MS = 100;
export const EXIT_BATCH = 256;

/**
 * The cluster's exit events, recorded in batches by the worker that hears them (LifecycleService
 * .exitedMany: one statement, one schedule request), instead of one `exited` lifecycle message
 * per exit and per worker. What cannot be done here goes through the lifecycle queue, which
 * retries: the ends when the statement fails, the removals of runs the driver refused. An exit
 * lost with a worker killed mid-batch is still heard by the other workers, and the reconciler
 * finds it from the driver's status in any case.
 */
@Injectable()
export class ExitBatcher {
  private readonly logger = new Logger('lifecycle');
  private readonly batch: MicroBatch<{ jobId: string; exitCode: number }>;

  constructor(
    private readonly lifecycle: LifecycleService,
    private readonly queues: QueuesService,
  ) {
    this.batch = new MicroBatch((exits) => this.record(exits), EXIT_WINDOW_MS, EXIT_BATCH);
  }

  exited(jobId: string, exitCode: number): void {
    this.batch.add({ jobId, exitCode });
  }

  /** Records what is collected now (shutdown, tests). */
  drain(): Promise<void> {
    return this.batch.drain();
  }

  private async record(exits: { jobId: string; exitCode: number }[]): Promise<void> {
    let retry: { action: 'exited' | 'stop'; jobId: string; exitCode?: number }[];
    try {
      const failed = await this.lifecycle.exitedMany(exits);
      retry = failed.map((f) => ({ action: 'stop', jobId: f.jobId }));
    } catch (e) {
      this.logger.warn(`recording ${exits.length} exit(s) failed (${e instanceof Error ? e.message : String(e)}); queued one by one`);
      retry = exits.map((x) => ({ action: 'exited', jobId: x.jobId, exitCode: x.exitCode }));
    }
    for (const r of retry) await this.queues.lifecycle(r).catch((err: unknown) => this.logger.error(`job ${r.jobId}: ${String(err)}`));
  }
}
