import { QueuesService } from './queues.service';

/** A failed job kept for inspection must not swallow a new enqueue of the same id (reconciler re-derivation). */
describe('QueuesService enqueue after a failed attempt', () => {
  function service(existing: { failed: boolean } | null) {
    const removed: string[] = [];
    const added: string[] = [];
    const queue = {
      getJob: async (id: string) => (existing ? { id, isFailed: async () => existing.failed, remove: async () => void removed.push(id) } : undefined),
      add: async (_name: string, _data: unknown, opts: { jobId?: string }) => void added.push(opts.jobId ?? ''),
    };
    const svc = Object.create(QueuesService.prototype) as QueuesService;
    (svc as unknown as { queues: Map<string, unknown> }).queues = new Map([
      ['lifecycle', queue],
      ['failover', queue],
      ['autoscale', queue],
    ]);
    return { svc, removed, added };
  }

  it.each([
    ['a failed start is replaced', { failed: true }, ['start-j1']],
    ['a waiting or active start is kept (the add is a no-op in BullMQ)', { failed: false }, []],
    ['no earlier job', null, []],
  ])('%s', async (_what, existing, wantRemoved) => {
    const { svc, removed, added } = service(existing);
    await svc.lifecycle({ action: 'start', jobId: 'j1' });
    expect(removed).toEqual(wantRemoved);
    expect(added).toEqual(['start-j1']);
  });

  it('replaces a failed failover step too', async () => {
    const { svc, removed } = service({ failed: true });
    await svc.failover({ action: 'job-lost', jobId: 'j1' }, 'lost-j1-reconcile');
    expect(removed).toEqual(['lost-j1-reconcile']);
  });
});

/** Schedule requests are coalesced per process, and none is lost. */
describe('QueuesService.requestSchedule', () => {
  function service() {
    const sent: string[] = [];
    const svc = Object.create(QueuesService.prototype) as QueuesService;
    Object.assign(svc, {
      config: { queuePrefix: 'p' },
      redis: { client: { set: async () => 'OK' } },
      queues: new Map([['schedule', { add: async (_n: string, data: { reason: string }) => void sent.push(data.reason) }]]),
    });
    return { svc, sent };
  }

  it('sends the first request at once and a burst after it as one, once the window ends', async () => {
    const { svc, sent } = service();
    const first = svc.requestSchedule('job 0 submitted');
    await first;
    expect(sent).toEqual(['job 0 submitted']);
    const burst = Array.from({ length: 50 }, (_, i) => svc.requestSchedule(`job ${i + 1} submitted`));
    await Promise.all(burst);
    expect(sent).toEqual(['job 0 submitted', 'job 1 submitted and 49 more']);
  });

  it('sends a request made after a quiet window at once', async () => {
    const { svc, sent } = service();
    await svc.requestSchedule('a');
    await new Promise((r) => setTimeout(r, 60));
    await svc.requestSchedule('b');
    expect(sent).toEqual(['a', 'b']);
  });
});
