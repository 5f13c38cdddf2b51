import { LifecycleService } from './lifecycle.service';

/** A start the cluster refuses (GPU quarantined, node down since the cycle's snapshot) gives the GPUs back instead of retrying forever. */
describe('LifecycleService.start refused by the cluster', () => {
  const job = { id: 'j1', tenantId: 't1', version: 3, state: 'starting', kind: 'batch', progressSeconds: 0, durationSeconds: 60, checkpoint: null, allocations: [{ replica: 0, milli: 1000, migProfile: null, node: { name: 'n1' }, gpu: { index: 0 } }] };

  it.each([
    ['requeued when the job is still this placement', true, 'resolves', ['stop j1', 'requeueRefused j1 3', 'requestSchedule']],
    ['left to the queue retry when the job changed meanwhile', false, 'rejects', ['stop j1', 'requeueRefused j1 3']],
  ])('%s', async (_what, requeued, want, wantCalls) => {
    const calls: string[] = [];
    const repo = { findWithAllocations: async () => job, requeueRefused: async (j: typeof job) => (calls.push(`requeueRefused ${j.id} ${j.version}`), requeued), markRunning: async () => true };
    const driver = {
      start: async () => {
        throw new Error('GPU 0 of node n1 is unhealthy');
      },
      stop: async (id: string) => void calls.push(`stop ${id}`),
    };
    const queues = { requestSchedule: async () => void calls.push('requestSchedule') };
    const svc = new LifecycleService(repo as never, queues as never, driver as never, { driver: { simSpeed: 1 } } as never);
    const run = svc.start('j1');
    if (want === 'resolves') await expect(run).resolves.toBeUndefined();
    else await expect(run).rejects.toThrow('unhealthy');
    expect(calls).toEqual(wantCalls);
  });
});
