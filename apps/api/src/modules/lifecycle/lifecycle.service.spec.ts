import { LifecycleService } from './lifecycle.service';

/** A start the cluster refuses (GPU quarantined, node down since the cycle's snapshot) gives the GPUs back instead of retrying forever. */
describe('LifecycleService.start refused by the cluster', () => {
  const job = {
    id: 'j1',
    tenantId: 't1',
    version: 3,
    state: 'starting',
    kind: 'batch',
    progressSeconds: 0,
    durationSeconds: 60,
    checkpoint: null,
    allocations: [{ replica: 0, gpuId: 'g0', milli: 1000, migProfile: null, node: { name: 'n1' }, gpu: { index: 0 } }],
  };

  it.each([
    [
      'requeued (its GPU held out of placement) when the job is still this placement',
      true,
      'resolves',
      ['stop j1', 'refused g0', 'requeueRefused j1 3', 'requestSchedule'],
    ],
    ['left to the queue retry when the job changed meanwhile', false, 'rejects', ['stop j1', 'refused g0', 'requeueRefused j1 3']],
  ])('%s', async (_what, requeued, want, wantCalls) => {
    const calls: string[] = [];
    const repo = {
      findWithAllocations: async () => job,
      requeueRefused: async (j: typeof job) => (calls.push(`requeueRefused ${j.id} ${j.version}`), requeued),
      markRunning: async () => true,
    };
    const driver = {
      start: async () => {
        throw new Error('GPU 0 of node n1 is unhealthy');
      },
      stop: async (id: string) => void calls.push(`stop ${id}`),
    };
    const queues = { requestSchedule: async () => void calls.push('requestSchedule') };
    const refusals = { refused: async (_what: string, gpuIds: string[]) => void calls.push(`refused ${gpuIds.join(',')}`) };
    const svc = new LifecycleService(repo as never, queues as never, driver as never, { driver: { simSpeed: 1 } } as never, refusals as never);
    const run = svc.start('j1');
    if (want === 'resolves') await expect(run).resolves.toBeUndefined();
    else await expect(run).rejects.toThrow('unhealthy');
    expect(calls).toEqual(wantCalls);
  });
});

/** A suspend in flight when the cluster takes the job away keeps the job (suspended with its progress), not a failure. */
describe('LifecycleService.suspend when the job exits meanwhile', () => {
  const job = {
    id: 'j2',
    tenantId: 't1',
    version: 5,
    state: 'suspending',
    kind: 'training',
    progressSeconds: 120,
    durationSeconds: 600,
    checkpoint: 'ckpt-1',
    runningSince: null,
    allocations: [],
  };

  it.each([
    [
      'its node was lost: suspended with the progress recorded so far',
      { state: 'exited', exitCode: 137, progressSeconds: 150, reason: 'node-lost' },
      ['markSuspended j2 ckpt-1 120', 'requestSchedule'],
    ],
    [
      'a GPU fault took it: suspended too',
      { state: 'exited', exitCode: 137, progressSeconds: 150, reason: 'gpu-fault' },
      ['markSuspended j2 ckpt-1 120', 'requestSchedule'],
    ],
    [
      'it completed on its own: finished, then its finished pods removed',
      { state: 'exited', exitCode: 0, progressSeconds: 600, reason: 'completed' },
      ['finish j2 0', 'requestSchedule', 'stop j2'],
    ],
  ])('%s', async (_what, status, wantCalls) => {
    const calls: string[] = [];
    const repo = {
      findWithAllocations: async () => job,
      markSuspended: async (id: string, c: { checkpoint: string | null; progressSeconds: number }) => (
        calls.push(`markSuspended ${id} ${c.checkpoint} ${c.progressSeconds}`),
        true
      ),
      finish: async (id: string, code: number) => (calls.push(`finish ${id} ${code}`), true),
    };
    const driver = {
      status: async () => status,
      stop: async (id: string) => void calls.push(`stop ${id}`),
      suspend: async () => {
        throw new Error('not running');
      },
    };
    const queues = { requestSchedule: async () => void calls.push('requestSchedule') };
    const svc = new LifecycleService(repo as never, queues as never, driver as never, { driver: { simSpeed: 1 } } as never, {} as never);
    await svc.suspend('j2');
    expect(calls).toEqual(wantCalls);
  });

  it('a job whose end another message recorded already: its leftovers are removed; one that runs again is left alone', async () => {
    const calls: string[] = [];
    let state = 'failed';
    const repo = { finish: async () => false, findWithAllocations: async () => ({ state }) };
    const driver = { stop: async (id: string) => void calls.push(`stop ${id}`) };
    const queues = { requestSchedule: async () => void calls.push('requestSchedule') };
    const svc = new LifecycleService(repo as never, queues as never, driver as never, { driver: { simSpeed: 1 } } as never, {} as never);
    await svc.exited('j3', 1);
    expect(calls).toEqual(['stop j3']);
    state = 'pending';
    await svc.exited('j3', 1);
    expect(calls).toEqual(['stop j3']);
  });
});
