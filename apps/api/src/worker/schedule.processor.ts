import { Injectable } from '@nestjs/common';
import { SchedulingService, type CycleReport } from '../modules/scheduling/scheduling.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';
import { QueuesService } from '../queues/queues.service';
import { MetricsRecorder } from '../modules/metrics/metrics.recorder';
import { NodeManagerLoop } from '../modules/node-manager/node-manager.loop';
import { CycleActivity } from '../common/cycle-activity.store';

/**
 * Resolves once performance.now() has reached `at`. A timer alone can fire a few milliseconds
 * early by this clock (it counts from the event loop's cached time, stale after a busy turn:
 * seen 8 ms early under CI load), so the rest is waited for again.
 */
async function waitUntil(at: number): Promise<void> {
  for (let left = at - performance.now(); left > 0; left = at - performance.now()) await new Promise<void>((r) => setTimeout(r, Math.ceil(left)));
}

const MAX_ROUNDS = 20;

/**
 * Under load (requests arriving while a cycle runs), a cycle begins at least this long after the
 * one before began: each cycle reads the whole queue, the running jobs and the quota state and
 * explains what it could not place, so back-to-back cycles of a few hundred milliseconds spent
 * the CPU the submissions and starts need on re-reading the same queue. A request to an idle
 * scheduler still gets its cycle at once; what arrives meanwhile is placed by the next cycle
 * together (batch schedulers such as Volcano run one cycle a second).
 */
export const MIN_CYCLE_INTERVAL_MS = 500;

/** `schedule`: runs cycles until no new request arrived meanwhile (one at a time: the job is deduplicated). */
@Injectable()
export class ScheduleProcessor implements QueueProcessor {
  readonly queue = 'schedule' as const;
  readonly concurrency = 1;

  constructor(
    private readonly scheduling: SchedulingService,
    private readonly queues: QueuesService,
    private readonly metrics: MetricsRecorder,
    private readonly nodeManager: NodeManagerLoop,
    private readonly activity: CycleActivity,
  ) {}

  async process(data: unknown): Promise<CycleReport[]> {
    QUEUES.schedule.parse(data);
    // (background work steps aside while this process cycles: common/cycle-activity.store.ts)
    return this.activity.during(() => this.cycles());
  }

  private async cycles(): Promise<CycleReport[]> {
    const reports: CycleReport[] = [];
    let round = 0;
    let began = 0;
    do {
      if (round > 0) await waitUntil(began + MIN_CYCLE_INTERVAL_MS);
      await this.queues.takeScheduleRequest();
      began = performance.now();
      // MIG-waiting work goes to the node manager mid-cycle, as soon as the placements are committed
      const report = await this.scheduling.cycle({ migWaiting: (ids) => this.nodeManager.planSoon(ids) });
      reports.push(report);
      await this.metrics.recordCycle(report);
    } while (++round < MAX_ROUNDS && (await this.queues.takeScheduleRequest()));
    return reports;
  }
}
