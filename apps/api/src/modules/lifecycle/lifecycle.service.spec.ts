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

/** The starts of one cycle go to the driver together; a refusal or a cancel touches only its own job. */
describe('LifecycleService.startMany', () => {
  const job = (id: string, state = 'starting') => ({
    id,
    tenantId: 't1',
    version: 1,
    state,
    kind: 'batch',
    progressSeconds: 0,
    durationSeconds: 60,
    checkpoint: null,
    allocations: [{ replica: 0, gpuId: `g-${id}`, milli: 1000, migProfile: null, node: { name: 'n1' }, gpu: { index: 0 } }],
  });

  it('starts every starting job in one driver call, requeues the refused one, stops the one cancelled meanwhile', async () => {
    const calls: string[] = [];
    const repo = {
      // j4 was cancelled before the message ran: never sent to the driver
      findManyWithAllocations: async (ids: string[]) => (calls.push(`find ${ids.join(',')}`), [job('j1'), job('j2'), job('j3'), job('j4', 'cancelled')]),
      requeueRefused: async (j: { id: string }) => (calls.push(`requeueRefused ${j.id}`), true),
      // j3 was cancelled while its start was in flight
      markRunningMany: async (ids: string[]) => (calls.push(`markRunningMany ${ids.join(',')}`), new Set(ids.filter((id) => id !== 'j3'))),
    };
    const driver = {
      startMany: async (reqs: { jobId: string }[]) => {
        calls.push(`startMany ${reqs.map((r) => r.jobId).join(',')}`);
        return reqs.map((r) => (r.jobId === 'j2' ? { jobId: r.jobId, ok: false, error: new Error('MIG slice gone') } : { jobId: r.jobId, ok: true }));
      },
      stop: async (id: string) => void calls.push(`stop ${id}`),
    };
    const queues = { requestSchedule: async () => void calls.push('requestSchedule') };
    const refusals = { refused: async (_what: string, gpuIds: string[]) => void calls.push(`refused ${gpuIds.join(',')}`) };
    const svc = new LifecycleService(repo as never, queues as never, driver as never, { driver: { simSpeed: 1 } } as never, refusals as never);
    await svc.startMany(['j1', 'j2', 'j3', 'j4']);
    expect(calls).toEqual([
      'find j1,j2,j3,j4',
      'startMany j1,j2,j3',
      'stop j2',
      'refused g-j2',
      'requeueRefused j2',
      'requestSchedule',
      'markRunningMany j1,j3',
      'stop j3',
    ]);
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
      finishMany: async (exits: { jobId: string; exitCode: number }[]) => (
        exits.forEach((x) => calls.push(`finish ${x.jobId} ${x.exitCode}`)),
        new Set(exits.map((x) => x.jobId))
      ),
      ended: async () => new Set<string>(),
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
    const repo = { finishMany: async () => new Set<string>(), ended: async (ids: string[]) => new Set(ids.filter(() => state === 'failed')) };
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

describe('LifecycleService.exitedMany', () => {
  const setup = (finished: string[], endedElsewhere: string[], refuseStop: string[] = []) => {
    const calls: string[] = [];
    const repo = {
      finishMany: async (exits: { jobId: string; exitCode: number }[]) => (
        calls.push(`finishMany ${exits.map((x) => `${x.jobId}:${x.exitCode}`).join(',')}`),
        new Set(finished)
      ),
      ended: async (ids: string[]) => (calls.push(`ended ${ids.join(',')}`), new Set(ids.filter((id) => endedElsewhere.includes(id)))),
    };
    const driver = {
      stop: async (id: string) => {
        if (refuseStop.includes(id)) throw new Error(`cannot stop ${id}`);
        calls.push(`stop ${id}`);
      },
    };
    const queues = { requestSchedule: async (why: string) => void calls.push(`requestSchedule ${why}`) };
    return { calls, svc: new LifecycleService(repo as never, queues as never, driver as never, { driver: { simSpeed: 1 } } as never, {} as never) };
  };

  it('records the ends together, asks for one cycle, and removes the runs of every ended job of the batch', async () => {
    const { calls, svc } = setup(['a', 'b'], ['c']);
    const failed = await svc.exitedMany([
      { jobId: 'a', exitCode: 0 },
      { jobId: 'b', exitCode: 3 },
      { jobId: 'c', exitCode: 0 },
      { jobId: 'd', exitCode: 0 },
    ]);
    expect(failed).toEqual([]);
    // c ended through another worker: removed here too; d is not ended (requeued meanwhile): left alone
    expect(calls).toEqual(['finishMany a:0,b:3,c:0,d:0', 'requestSchedule 2 jobs finished', 'ended c,d', 'stop a', 'stop b', 'stop c']);
  });

  it('asks for no cycle when it ended nothing, and returns the removals the driver refused', async () => {
    const { calls, svc } = setup([], ['a', 'b'], ['b']);
    const failed = await svc.exitedMany([
      { jobId: 'a', exitCode: 0 },
      { jobId: 'b', exitCode: 0 },
    ]);
    expect(failed.map((f) => f.jobId)).toEqual(['b']);
    expect(calls).toEqual(['finishMany a:0,b:0', 'ended a,b', 'stop a']);
  });
});

/** The reconciler sends a start again only when it may have been lost, not while it waits in the queue. */
describe('LifecycleService.reconcile of starting jobs', () => {
  const now = new Date('2026-12-04T10:00:00Z');
  const starting = (id: string, placedSecondsAgo: number | null) => ({
    id,
    state: 'starting',
    progressSeconds: 0,
    runningSince: null,
    durationSeconds: 60,
    placedAt: placedSecondsAgo === null ? null : new Date(now.getTime() - placedSecondsAgo * 1000),
  });
  const run = async (opts: { everyStart?: boolean }) => {
    const sent: string[] = [];
    const repo = {
      activeJobs: async () => [starting('young', 2), starting('old', 45), starting('unplaced', null), { ...starting('susp', 1), state: 'suspending' }],
      countPending: async () => 0,
    };
    const queues = { lifecycle: async (p: { action: string; jobId: string }) => void sent.push(`${p.action} ${p.jobId}`) };
    const svc = new LifecycleService(repo as never, queues as never, {} as never, { startGraceMs: 30_000, driver: { simSpeed: 1 } } as never, {} as never);
    await svc.reconcile(now, opts);
    return sent;
  };

  it('leaves a start younger than the grace to its queued message and sends the older ones again', async () => {
    expect(await run({})).toEqual(['start old', 'start unplaced', 'suspend susp']);
  });

  it('sends every start again at a worker boot, whatever its age', async () => {
    expect(await run({ everyStart: true })).toEqual(['start young', 'start old', 'start unplaced', 'suspend susp']);
  });
});

/** A running job the driver does not know is started again only if it still runs in Postgres, in one driver round. */
describe('LifecycleService.reconcile of running jobs', () => {
  it('asks every status in one call and re-attaches only the jobs that still run and are still unknown', async () => {
    const now = new Date('2026-12-04T10:00:00Z');
    const running = (id: string) => ({
      id,
      state: 'running',
      progressSeconds: 10,
      runningSince: new Date(now.getTime() - 5000),
      durationSeconds: 60,
      placedAt: now,
    });
    const full = (id: string, state: string) => ({
      id,
      state,
      kind: 'batch',
      progressSeconds: 10,
      durationSeconds: 60,
      checkpoint: null,
      allocations: [{ replica: 0, gpuId: `g-${id}`, milli: 1000, migProfile: null, node: { name: 'n1' }, gpu: { index: 0 } }],
    });
    const calls: string[] = [];
    const repo = {
      activeJobs: async () => [running('ok'), running('ended'), running('lost'), running('done')],
      findManyWithAllocations: async (ids: string[]) => (calls.push(`read ${ids.join(',')}`), [full('ended', 'succeeded'), full('lost', 'running')]),
      countPending: async () => 0,
    };
    const states: Record<string, string> = { ok: 'running', ended: 'unknown', lost: 'unknown', done: 'exited' };
    const driver = {
      statusMany: async (ids: string[]) => (
        calls.push(`statusMany ${ids.join(',')}`),
        ids.map((id) => ({ state: states[id], progressSeconds: 0, exitCode: 0 }))
      ),
      start: async (req: { jobId: string; progressSeconds: number }) => void calls.push(`start ${req.jobId} ${req.progressSeconds}`),
    };
    const queues = { lifecycle: async (p: { action: string; jobId: string }) => void calls.push(`${p.action} ${p.jobId}`) };
    const svc = new LifecycleService(repo as never, queues as never, driver as never, { startGraceMs: 30_000, driver: { simSpeed: 2 } } as never, {} as never);
    await svc.reconcile(now);
    expect(calls).toEqual(['statusMany ok,ended,lost,done', 'exited done', 'read ended,lost', 'statusMany lost', 'start lost 20']);
  });
});
