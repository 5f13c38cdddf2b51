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
