import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { QueuesService } from '../queues/queues.service';

/** Seconds between two reads of the running jobs' logs (what the console's log panel follows). */
export const LOG_TICK_SECONDS = 2;

/** Registers the repeatable `logs` tick (one scheduler, shared by every worker). */
@Injectable()
export class LogsScheduler implements OnApplicationBootstrap {
  constructor(private readonly queues: QueuesService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queues
      .queue('logs')
      .upsertJobScheduler('logs-tick', { every: LOG_TICK_SECONDS * 1000 }, { name: 'tick', data: {}, opts: { removeOnComplete: true, removeOnFail: 50 } });
  }
}
