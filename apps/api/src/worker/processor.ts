import type { QueueName } from '../queues/queue-names';

/** A queue's processor: parses its payload and calls one service. */
export interface QueueProcessor {
  readonly queue: QueueName;
  readonly concurrency: number;
  process(data: unknown): Promise<unknown>;
}

export const QUEUE_PROCESSORS = Symbol('QUEUE_PROCESSORS');
