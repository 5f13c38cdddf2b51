import { checkProcessors } from './worker.host';
import type { QueueProcessor } from './processor';

const p = (queue: QueueProcessor['queue']): QueueProcessor => ({ queue, concurrency: 1, process: async () => undefined });

describe('queue processors at boot', () => {
  it('accepts exactly one processor per queue', () => {
    expect(() => checkProcessors([p('schedule'), p('lifecycle')])).not.toThrow();
  });
  it('refuses a queue without a processor', () => {
    expect(() => checkProcessors([p('schedule')])).toThrow('queue "lifecycle" has 0 processors');
  });
  it('refuses a queue with two processors', () => {
    expect(() => checkProcessors([p('schedule'), p('schedule'), p('lifecycle')])).toThrow('queue "schedule" has 2 processors');
  });
});
