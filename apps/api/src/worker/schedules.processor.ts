import { Injectable } from '@nestjs/common';
import { SchedulesService, type ScheduleTickReport } from '../modules/schedules/schedules.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `schedules` (repeatable): one pass over the suspend and resume windows. */
@Injectable()
export class SchedulesProcessor implements QueueProcessor {
  readonly queue = 'schedules' as const;
  readonly concurrency = 1;

  constructor(private readonly schedules: SchedulesService) {}

  async process(data: unknown): Promise<ScheduleTickReport> {
    QUEUES.schedules.parse(data);
    return this.schedules.tick();
  }
}
