import type { ClusterSnapshot, GpuState } from '@gantry/scheduler';
import { planMigChanges } from './mig-planning';

const gpu = (i: number, over: Partial<GpuState> = {}): GpuState => ({
  id: `g${i}`,
  index: i,
  model: 'H100-80GB',
  nvlinkDomain: 0,
  healthy: true,
  schedulable: true,
  mode: 'whole',
  allocated: false,
  sharedMilliUsed: 0,
  mig: [],
  ...over,
});
const oneG = (busy: number[]) => [0, 1, 2, 3, 4, 5, 6].map((start) => ({ profile: '1g.10gb', start, size: 1, busy: busy.includes(start) }));
const snap = (...gpus: GpuState[]): ClusterSnapshot => ({
  nodes: [
    {
      id: 'n0',
      name: 'n0',
      leaf: 'l',
      spine: 's',
      schedulable: true,
      persona: 'container',
      cpuMilli: 1e6,
      memoryMiB: 1e7,
      cpuMilliFree: 1e6,
      memoryMiBFree: 1e7,
      gpus,
    },
  ],
});
const pending = (resources: object, replicas = 1) => ({ kind: 'batch', replicas, resources });

describe('planMigChanges', () => {
  it.each([
    {
      name: 'an idle GPU changed a minute ago is re-partitioned for a slice nobody has free (the hold is for GPUs in use)',
      input: {
        snapshot: snap(gpu(0, { mode: 'mig', mig: [{ profile: '7g.80gb', start: 0, size: 8, busy: false }] })),
        pending: [pending({ migProfile: '3g.40gb' })],
      },
      lastChanged: { g0: 1_000_000 },
      wantGpus: ['g0'],
    },
    {
      name: 'a GPU in use changed a minute ago is left alone',
      input: { snapshot: snap(gpu(0, { mode: 'mig', mig: oneG([0]).slice(0, 1) })), pending: [pending({ migProfile: '3g.40gb' })] },
      lastChanged: { g0: 1_000_000 },
      wantGpus: [],
    },
    {
      name: 'a 7g wave on GPUs cut into idle 1g slices: the idle ones are re-partitioned',
      input: {
        snapshot: snap(gpu(0, { mode: 'mig', mig: oneG([]) }), gpu(1, { mode: 'mig', mig: oneG([3]) })),
        pending: [pending({ migProfile: '7g.80gb' }, 2)],
      },
      lastChanged: {},
      wantGpus: ['g0'],
    },
    {
      name: 'a change in flight that creates the slice: no second change',
      input: { snapshot: snap(gpu(0, { schedulable: false }), gpu(1)), pending: [pending({ migProfile: '1g.10gb' })] },
      inFlight: [{ model: 'H100-80GB', target: [{ profile: '1g.10gb', start: 0 }], busyStarts: new Set<number>() }],
      lastChanged: {},
      wantGpus: [],
    },
  ])('$name', ({ input, lastChanged, inFlight, wantGpus }) => {
    const plan = planMigChanges({
      ...input,
      inFlight: inFlight ?? [],
      lastChangedAtMs: lastChanged as Record<string, number>,
      nowMs: 1_060_000,
      holdMs: 600_000,
    });
    expect(plan.changes.map((c) => c.gpuId).sort()).toEqual(wantGpus);
  });
});
