import { Injectable } from '@nestjs/common';
import { TelemetryService, type TickReport } from '../modules/telemetry/telemetry.service';
import { QUEUES } from '../queues/queue-names';
import { CycleActivity } from '../common/cycle-activity.store';
import type { QueueProcessor } from './processor';
import type { QueuedJob } from './queued-job';

/** How long a tick steps aside at a time while this worker runs scheduling cycles. */
export const TICK_STEP_ASIDE_MS = 500;
/** How late a tick may get by stepping aside (past it, it runs where it is: a single worker that cycles without pause still samples). */
export const TICK_STEP_ASIDE_LIMIT_MS = 5_000;

/**
 * `telemetry` (repeatable): one sample of the driver's GPU metrics into the rollups. The tick is
 * taken at the time its iteration was due, not at the time it runs: a tick that runs late (a
 * busy worker, a step aside) still writes its own interval, and the next one the next (taken at
 * the time it ran, a tick late across an interval's end wrote the next interval and left its own
 * unwritten). A tick due while this worker runs scheduling cycles steps aside for another worker.
 */
@Injectable()
export class TelemetryProcessor implements QueueProcessor {
  readonly queue = 'telemetry' as const;
  readonly concurrency = 1;

  constructor(
    private readonly telemetry: TelemetryService,
    private readonly activity: CycleActivity,
  ) {}

  async process(data: unknown, job?: QueuedJob): Promise<TickReport> {
    QUEUES.telemetry.parse(data);
    const due = job?.dueMs;
    if (job && due !== undefined && this.activity.cycling && Date.now() - due < TICK_STEP_ASIDE_LIMIT_MS) await job.stepAside(TICK_STEP_ASIDE_MS);
    return this.telemetry.tick(due !== undefined ? new Date(Math.min(due, Date.now())) : undefined);
  }
}
