import { checkSlots, checkAllocationModes, checkActiveSlots } from './slots';
import { checkMigLayouts, checkMigSlicesExist } from './mig';
import { checkQuotas } from './quotas';
import { checkHolders, checkJobs, checkReplicas, replicaNeed } from './holders';
import { checkSettled } from './settled';
import { strictViolations } from './check';
import type { AllocationRow, ClusterState, GpuRow, JobRow, ReplicaRow } from './state';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-01T01:00:00Z');

const gpu = (id: string, over: Partial<GpuRow> = {}): GpuRow => ({
  id,
  nodeId: 'n1',
  model: 'H100-80GB',
  mode: 'whole',
  migCapable: true,
  health: 'healthy',
  schedulable: true,
  migTarget: null,
  migRequestedAt: null,
  ...over,
});
let seq = 0;
const alloc = (gpuId: string, over: Partial<AllocationRow> = {}): AllocationRow => {
  const a: AllocationRow = {
    id: `a${++seq}`,
    tenantId: 't',
    teamId: 'team',
    jobId: 'j1',
    endpointId: null,
    replica: 0,
    nodeId: 'n1',
    gpuId,
    gpuModel: 'H100-80GB',
    migProfile: null,
    migStart: null,
    milli: 1000,
    gpuUnits: 1,
    activeSlot: null,
    startedAt: T1,
    ...over,
  };
  if (!('activeSlot' in over)) a.activeSlot = a.migProfile ? `${gpuId}:mig:${a.migStart}` : a.milli >= 1000 ? `${gpuId}:whole` : null;
  return a;
};
const job = (id: string, over: Partial<JobRow> = {}): JobRow => ({
  id,
  teamId: 'team',
  state: 'running',
  replicas: 1,
  resources: { gpus: 1 },
  reasons: [],
  startedAt: T0,
  runningSince: T0,
  finishedAt: null,
  ...over,
});
const replica = (endpointId: string, n: number, over: Partial<ReplicaRow> = {}): ReplicaRow => ({
  id: `r-${endpointId}-${n}`,
  endpointId,
  replica: n,
  activeKey: `${endpointId}:${n}`,
  endedAt: null,
  resources: { gpus: 1 },
  teamId: 'team',
  ...over,
});
const state = (over: Partial<ClusterState>): ClusterState => ({
  allocations: [],
  endedWithSlot: [],
  gpus: [],
  instances: [],
  nodes: [],
  jobs: [],
  replicas: [],
  quotas: [],
  totalJobs: 0,
  ...over,
});
const rules = (vs: { rule: string; subject: string }[]) => vs.map((v) => `${v.rule} ${v.subject}`);

describe('slots (family 1 and 4)', () => {
  it.each([
    ['one whole GPU', [alloc('g')], []],
    ['two whole on one GPU', [alloc('g'), alloc('g', { activeSlot: null })], ['slot-double-booked gpu g:whole']],
    ['whole + share', [alloc('g'), alloc('g', { milli: 300 })], ['slot-double-booked gpu g']],
    ['two MIG slices at different starts', [alloc('g', { migProfile: '1g.10gb', migStart: 0 }), alloc('g', { migProfile: '1g.10gb', migStart: 1 })], []],
    [
      'one MIG start held twice',
      [alloc('g', { migProfile: '1g.10gb', migStart: 2 }), alloc('g', { migProfile: '1g.10gb', migStart: 2 })],
      ['slot-double-booked gpu g:mig:2'],
    ],
    ['shares summing to exactly 1000', [alloc('g', { milli: 500 }), alloc('g', { milli: 500 })], []],
    ['shares summing to 1001', [alloc('g', { milli: 501 }), alloc('g', { milli: 500 })], ['slot-double-booked gpu g']],
  ])('%s', (_name, allocations, want) => {
    expect(rules(checkSlots({ allocations }))).toEqual(want);
  });

  it.each([
    ['whole on whole', 'whole' as const, alloc('g'), 0],
    ['whole on shared', 'shared' as const, alloc('g'), 1],
    ['share on shared', 'shared' as const, alloc('g', { milli: 250 }), 0],
    ['share on whole', 'whole' as const, alloc('g', { milli: 250 }), 1],
    ['MIG on mig', 'mig' as const, alloc('g', { migProfile: '1g.10gb', migStart: 0 }), 0],
    ['MIG on whole', 'whole' as const, alloc('g', { migProfile: '1g.10gb', migStart: 0 }), 1],
    ['model differs from the GPU', 'whole' as const, alloc('g', { gpuModel: 'A100-80GB' }), 1],
  ])('mode: %s', (_name, mode, a, want) => {
    expect(checkAllocationModes({ allocations: [a], gpus: [gpu('g', { mode })] })).toHaveLength(want);
  });

  it.each([
    ['whole with its key', alloc('g'), 0],
    ['whole without a key', alloc('g', { activeSlot: null }), 1],
    ['share with a key', alloc('g', { milli: 500, activeSlot: 'g:whole' }), 1],
    ['MIG with the wrong start', alloc('g', { migProfile: '1g.10gb', migStart: 1, activeSlot: 'g:mig:0' }), 1],
  ])('activeSlot: %s', (_name, a, want) => {
    expect(checkActiveSlots({ allocations: [a], endedWithSlot: [] })).toHaveLength(want);
  });
});

describe('MIG (families 2 and 3)', () => {
  const slice = (profile: string, start: number, size: number) => ({ gpuId: 'g', profile, start, size });
  it.each([
    ['no slices, whole', 'whole' as const, true, [], []],
    ['valid layout', 'mig' as const, true, [slice('3g.40gb', 0, 4), slice('3g.40gb', 4, 4)], []],
    ['overlap', 'mig' as const, true, [slice('3g.40gb', 0, 4), slice('2g.20gb', 2, 2)], ['mig-layout-invalid gpu g']],
    ['illegal start', 'mig' as const, true, [slice('3g.40gb', 2, 4)], ['mig-layout-invalid gpu g']],
    ['wrong recorded size', 'mig' as const, true, [slice('3g.40gb', 0, 2)], ['mig-layout-invalid gpu g']],
    ['not MIG-capable', 'mig' as const, false, [slice('1g.10gb', 0, 1)], ['mig-layout-invalid gpu g']],
    ['slices on a whole GPU', 'whole' as const, true, [slice('1g.10gb', 0, 1)], ['gpu-mode-instances-mismatch gpu g']],
    ['mig GPU without slices', 'mig' as const, true, [], ['gpu-mode-instances-mismatch gpu g']],
  ])('layout: %s', (_name, mode, migCapable, instances, want) => {
    expect(rules(checkMigLayouts({ gpus: [gpu('g', { mode, migCapable })], instances }))).toEqual(want);
  });

  it.each([
    ['its slice exists', alloc('g', { migProfile: '1g.10gb', migStart: 0 }), []],
    ['another profile at that start', alloc('g', { migProfile: '1g.20gb', migStart: 0 }), ['mig-instance-missing gpu g:mig:0']],
    ['no slice at that start', alloc('g', { migProfile: '1g.10gb', migStart: 1 }), ['mig-instance-missing gpu g:mig:1']],
  ])('slice: %s', (_name, a, want) => {
    expect(rules(checkMigSlicesExist({ allocations: [a], instances: [slice('1g.10gb', 0, 1)] }))).toEqual(want);
  });
});

describe('quotas (family 5)', () => {
  const q = (gpuModel: string, limit: number, updatedAt = T0) => ({ teamId: 'team', gpuModel, limit, updatedAt });
  it.each([
    ['within the * limit', [q('*', 2)], [alloc('g1'), alloc('g2')], [job('j1')], []],
    ['above the * limit, admitted after it was set', [q('*', 1)], [alloc('g1'), alloc('g2')], [job('j1')], ['team-over-quota team team:*']],
    ['above the * limit, lowered after the work started', [q('*', 1, new Date(T1.getTime() + 1))], [alloc('g1'), alloc('g2')], [job('j1')], []],
    [
      'above a model row, work named the model',
      [q('H100-80GB', 1)],
      [alloc('g1'), alloc('g2')],
      [job('j1', { resources: { gpus: 2, gpuModel: 'H100-80GB' } })],
      ['team-over-quota team team:H100-80GB'],
    ],
    [
      'above a model row, work named no model (the row does not bind it)',
      [q('H100-80GB', 1)],
      [alloc('g1'), alloc('g2')],
      [job('j1', { resources: { gpus: 2 } })],
      [],
    ],
    [
      'a model row does not count other models',
      [q('A100-80GB', 1)],
      [alloc('g1'), alloc('g2')],
      [job('j1', { resources: { gpus: 2, gpuModel: 'A100-80GB' } })],
      [],
    ],
    [
      'shares add up exactly to the limit',
      [q('*', 1)],
      [alloc('g1', { milli: 500, gpuUnits: 0.5 }), alloc('g1', { milli: 500, gpuUnits: 0.5 })],
      [job('j1')],
      [],
    ],
  ])('%s', (_name, quotas, allocations, jobs, want) => {
    expect(rules(checkQuotas({ quotas, allocations, jobs, replicas: [] }))).toEqual(want);
  });
});

describe('holders, jobs and replicas (families 6 to 8)', () => {
  it.each([
    [{ gpus: 4 }, { count: 4, kind: 'whole' }],
    [{ migProfile: '1g.10gb' }, { count: 1, kind: 'mig', migProfile: '1g.10gb' }],
    [{ gpuFraction: 0.5 }, { count: 1, kind: 'share' }],
    [{}, null],
  ])('replicaNeed(%j)', (resources, want) => {
    expect(replicaNeed(resources)).toEqual(want);
  });

  it.each([
    ['a running job', [job('j1')], [], alloc('g'), []],
    ['a succeeded job', [job('j1', { state: 'succeeded', finishedAt: T1, runningSince: null })], [], alloc('g'), ['allocation-orphaned']],
    ['no holder at all', [], [], alloc('g', { jobId: null }), ['allocation-orphaned']],
    ['a job of another team', [job('j1', { teamId: 'other' })], [], alloc('g'), ['allocation-orphaned']],
    ['an active replica', [], [replica('e', 0)], alloc('g', { jobId: null, endpointId: 'e' }), []],
    ['a stopped replica', [], [replica('e', 0, { endedAt: T1, activeKey: null })], alloc('g', { jobId: null, endpointId: 'e' }), ['allocation-orphaned']],
  ])('allocation of %s', (_name, jobs, replicas, a, want) => {
    expect(checkHolders({ allocations: [a], jobs, replicas }).map((v) => v.rule)).toEqual(want);
  });

  it.each([
    ['running with its GPU', job('j1'), [alloc('g')], []],
    ['pending holding a GPU', job('j1', { state: 'pending', runningSince: null, reasons: [{ code: 'queued' }] }), [alloc('g')], ['idle-job-holds-gpus']],
    ['suspended holding a GPU', job('j1', { state: 'suspended', runningSince: null }), [alloc('g')], ['idle-job-holds-gpus']],
    ['running without allocations', job('j1'), [], ['job-allocations-incomplete']],
    ['gang missing a replica', job('j1', { replicas: 2 }), [alloc('g')], ['job-allocations-incomplete']],
    ['gang complete', job('j1', { replicas: 2 }), [alloc('g'), alloc('h', { replica: 1 })], []],
    ['MIG job holding a whole GPU', job('j1', { resources: { migProfile: '1g.10gb' } }), [alloc('g')], ['job-allocations-incomplete']],
    ['succeeded without finishedAt', job('j1', { state: 'succeeded', runningSince: null }), [], ['job-fields-inconsistent']],
    ['running without runningSince', job('j1', { runningSince: null }), [alloc('g')], ['job-fields-inconsistent']],
    ['reasons not a list', job('j1', { reasons: {} }), [alloc('g')], ['job-fields-inconsistent']],
  ])('job %s', (_name, j, allocations, want) => {
    expect(checkJobs({ allocations, jobs: [j] }).map((v) => v.rule)).toEqual(want);
  });

  it.each([
    ['active with its GPU', replica('e', 0), [alloc('g', { jobId: null, endpointId: 'e' })], []],
    ['active without its GPU', replica('e', 0), [], ['replica-allocations-incomplete']],
    ['active without its key', replica('e', 0, { activeKey: null }), [alloc('g', { jobId: null, endpointId: 'e' })], ['replica-active-key-mismatch']],
    ['ended keeping its key', replica('e', 0, { endedAt: T1 }), [], ['replica-active-key-mismatch']],
  ])('replica %s', (_name, r, allocations, want) => {
    expect(checkReplicas({ allocations, replicas: [r] }).map((v) => v.rule)).toEqual(want);
  });
});

describe('settled rules', () => {
  const now = new Date(T1.getTime() + 3_600_000);
  const node = (over: Partial<ClusterState['nodes'][number]>) => ({
    id: 'n1',
    name: 'node-1',
    state: 'ready' as const,
    transitionStartedAt: null,
    transitionEtaAt: null,
    ...over,
  });
  it.each([
    ['quiet', state({ jobs: [job('j1')], gpus: [gpu('g')], nodes: [node({})] }), []],
    ['starting job', state({ jobs: [job('j1', { state: 'starting', runningSince: null })] }), ['job-stuck-in-transition']],
    ['pending job without reasons', state({ jobs: [job('j1', { state: 'pending', runningSince: null, reasons: [] })] }), ['pending-job-unexplained']],
    ['GPU out of scheduling, nothing in flight', state({ gpus: [gpu('g', { schedulable: false })] }), ['gpu-mig-change-stuck']],
    ['MIG change requested just now', state({ gpus: [gpu('g', { schedulable: false, migTarget: [], migRequestedAt: new Date(now.getTime() - 1000) })] }), []],
    ['MIG change requested an hour ago', state({ gpus: [gpu('g', { schedulable: false, migTarget: [], migRequestedAt: T1 })] }), ['gpu-mig-change-stuck']],
    ['switching before its ETA', state({ nodes: [node({ state: 'switching', transitionEtaAt: new Date(now.getTime() + 1000) })] }), []],
    ['switching past its ETA', state({ nodes: [node({ state: 'switching', transitionEtaAt: T1 })] }), ['node-transition-stuck']],
    ['draining for an hour (no ETA)', state({ nodes: [node({ state: 'draining', transitionStartedAt: T1 })] }), ['node-transition-stuck']],
    ['work on a down node', state({ nodes: [node({ state: 'down' })], gpus: [gpu('g')], allocations: [alloc('g')] }), ['allocation-on-failed-hardware']],
    [
      'work on an unhealthy GPU',
      state({ nodes: [node({})], gpus: [gpu('g', { health: 'unhealthy' })], allocations: [alloc('g')] }),
      ['allocation-on-failed-hardware'],
    ],
  ])('%s', (_name, s, want) => {
    expect(checkSettled(s, now, 30).map((v) => v.rule)).toEqual(want);
  });
});

describe('strictViolations', () => {
  it('a consistent cluster has none', () => {
    const s = state({
      gpus: [gpu('g'), gpu('m', { mode: 'mig' }), gpu('s', { mode: 'shared' })],
      instances: [{ gpuId: 'm', profile: '1g.10gb', start: 0, size: 1 }],
      jobs: [job('j1'), job('j2', { resources: { migProfile: '1g.10gb' } }), job('j3', { resources: { gpuFraction: 0.5 } })],
      allocations: [
        alloc('g'),
        alloc('m', { jobId: 'j2', migProfile: '1g.10gb', migStart: 0, gpuUnits: 1 / 7 }),
        alloc('s', { jobId: 'j3', milli: 500, gpuUnits: 0.5 }),
      ],
    });
    expect(strictViolations(s)).toEqual([]);
  });
});
