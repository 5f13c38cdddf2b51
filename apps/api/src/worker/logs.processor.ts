import { Injectable } from '@nestjs/common';
import { JobLogCollector, type LogTickReport } from '../modules/job-logs/job-log-collector.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `logs` (repeatable): what running jobs wrote, from the driver into Postgres. */
@Injectable()
export class LogsProcessor implements QueueProcessor {
  readonly queue = 'logs' as const;
  readonly concurrency = 1;

  constructor(private readonly collector: JobLogCollector) {}

  async process(data: unknown): Promise<LogTickReport> {
    QUEUES.logs.parse(data);
    return this.collector.tick();
  }
}
