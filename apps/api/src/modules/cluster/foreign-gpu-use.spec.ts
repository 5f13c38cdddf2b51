import { runCycle, type ClusterSnapshot, type GpuState, type PendingJob } from '@gantry/scheduler';
import { markForeignUse } from './foreign-gpu-use';

const gpu = (index: number, extra: Partial<GpuState> = {}): GpuState => ({
  id: `g${index}`,
  index,
  model: 'H100-80GB',
  nvlinkDomain: 0,
  healthy: true,
  schedulable: true,
  mode: 'whole',
  allocated: false,
  sharedMilliUsed: 0,
  mig: [],
  ...extra,
});

const cluster = (gpus: GpuState[]): ClusterSnapshot => ({
  nodes: [
    {
      id: 'n1',
      name: 'node-1',
      leaf: 'leaf-0',
      spine: 'spine-0',
      schedulable: true,
      persona: 'container',
      cpuMilli: 128_000,
      memoryMiB: 1_000_000,
      cpuMilliFree: 128_000,
      memoryMiBFree: 1_000_000,
      gpus,
    },
  ],
});

const job = (id: string, gpus: number): PendingJob => ({
  id,
  teamId: 't',
  priority: 1,
  createdAtMs: 0,
  replicas: 1,
  request: { gpus, cpuMilli: 1000, memoryMiB: 1024 },
  topology: { level: 'any', required: false },
});

describe('GPUs held by pods Gantry did not create', () => {
  it('are never offered: 6 of 8 held leaves room for 2 GPUs, not for 4, and not the GPUs already allocated', () => {
    const foreign = new Map([['node-1', { 'nvidia.com/gpu': 6 }]]);
    const snapshot = markForeignUse(cluster(Array.from({ length: 8 }, (_, i) => gpu(i))), foreign);
    expect(snapshot.nodes[0]!.gpus.filter((g) => !g.allocated).map((g) => g.index)).toEqual([0, 1]);
    expect(runCycle(markForeignUse(cluster(Array.from({ length: 8 }, (_, i) => gpu(i))), foreign), [job('four', 4)]).placed).toEqual([]);
    const two = runCycle(snapshot, [job('two', 2)]).placed[0]!;
    expect(two.replicas[0]!.gpus.map((g) => g.index).sort()).toEqual([0, 1]);
    // a GPU Gantry allocated itself is not counted twice: 1 allocated + 6 foreign leaves 1
    const withOwn = markForeignUse(cluster(Array.from({ length: 8 }, (_, i) => gpu(i, { allocated: i === 0 }))), foreign);
    expect(withOwn.nodes[0]!.gpus.filter((g) => !g.allocated).map((g) => g.index)).toEqual([1]);
  });

  it('leaves the nodes it is given as they are (buildSnapshot shares them between cycles)', () => {
    const given = cluster(Array.from({ length: 8 }, (_, i) => gpu(i)));
    const marked = markForeignUse(given, new Map([['node-1', { 'nvidia.com/gpu': 6 }]]));
    expect(marked.nodes[0]!.gpus.filter((g) => g.allocated)).toHaveLength(6);
    expect(given.nodes[0]!.gpus.filter((g) => g.allocated)).toHaveLength(0);
  });

  it('MIG slices of the profile a foreign pod holds are busy', () => {
    const slices = [0, 1, 2, 3].map((start) => ({ profile: '1g.10gb', start, size: 1, busy: false }));
    const snapshot = markForeignUse(cluster([gpu(0, { mode: 'mig', mig: slices })]), new Map([['node-1', { 'nvidia.com/mig-1g.10gb': 3 }]]));
    expect(snapshot.nodes[0]!.gpus[0]!.mig.filter((s) => !s.busy)).toHaveLength(1);
  });
});
