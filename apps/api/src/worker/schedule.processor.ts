import { Injectable } from '@nestjs/common';
import { SchedulingService, type CycleReport } from '../modules/scheduling/scheduling.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';
import { QueuesService } from '../queues/queues.service';
import { MetricsRecorder } from '../modules/metrics/metrics.recorder';
import { NodeManagerLoop } from '../modules/node-manager/node-manager.loop';

const MAX_ROUNDS = 20;

/** `schedule`: runs cycles until no new request arrived meanwhile (one at a time per worker). */
@Injectable()
export class ScheduleProcessor implements QueueProcessor {
  readonly queue = 'schedule' as const;
  readonly concurrency = 1;

  constructor(
    private readonly scheduling: SchedulingService,
    private readonly queues: QueuesService,
    private readonly metrics: MetricsRecorder,
    private readonly nodeManager: NodeManagerLoop,
  ) {}

  async process(data: unknown): Promise<CycleReport[]> {
    QUEUES.schedule.parse(data);
    const reports: CycleReport[] = [];
    let round = 0;
    do {
      await this.queues.takeScheduleRequest();
      // MIG-waiting work goes to the node manager mid-cycle, as soon as the placements are committed
      const report = await this.scheduling.cycle({ migWaiting: (ids) => this.nodeManager.planSoon(ids) });
      reports.push(report);
      await this.metrics.recordCycle(report);
    } while (++round < MAX_ROUNDS && (await this.queues.takeScheduleRequest()));
    return reports;
  }
}
