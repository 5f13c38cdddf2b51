import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { QueuesService } from '../queues/queues.service';

/** How often the worker looks for due suspend and resume windows. */
export const SCHEDULES_TICK_MS = 30_000;

/** Registers the repeatable `schedules` tick (one scheduler, shared by every worker). */
@Injectable()
export class SchedulesScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('schedules');

  constructor(private readonly queues: QueuesService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queues
      .queue('schedules')
      .upsertJobScheduler('schedules-tick', { every: SCHEDULES_TICK_MS }, { name: 'tick', data: {}, opts: { removeOnComplete: true, removeOnFail: 50 } });
    this.logger.log(`suspend and resume windows checked every ${SCHEDULES_TICK_MS / 1000} s`);
  }
}
