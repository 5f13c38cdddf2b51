import { checkProcessors } from './worker.host';
import type { QueueProcessor } from './processor';
import { QUEUE_NAMES } from '../queues/queue-names';

const p = (queue: QueueProcessor['queue']): QueueProcessor => ({ queue, concurrency: 1, process: async () => undefined });

describe('queue processors at boot', () => {
  it('accepts exactly one processor per queue', () => {
    expect(() => checkProcessors(QUEUE_NAMES.map(p))).not.toThrow();
  });
  it('refuses a queue without a processor', () => {
    expect(() => checkProcessors(QUEUE_NAMES.filter((q) => q !== 'lifecycle').map(p))).toThrow('queue "lifecycle" has 0 processors');
  });
  it('refuses a queue with two processors', () => {
    expect(() => checkProcessors([...QUEUE_NAMES.map(p), p('schedule')])).toThrow('queue "schedule" has 2 processors');
  });
});
