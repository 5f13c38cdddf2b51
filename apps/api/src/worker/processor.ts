import type { QueueName } from '../queues/queue-names';
import type { QueuedJob } from './queued-job';

/** A queue's processor: parses its payload and calls one service. */
export interface QueueProcessor {
  readonly queue: QueueName;
  readonly concurrency: number;
  process(data: unknown, job?: QueuedJob): Promise<unknown>;
}

export const QUEUE_PROCESSORS = Symbol('QUEUE_PROCESSORS');
