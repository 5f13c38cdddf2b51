import { emulatedNodesOf } from './emulated-node';
import { smallTopology } from '../__tests__/harness';
import { gpuResources, microTime } from './node-objects';

const fresh = () => emulatedNodesOf(smallTopology(1, 4))[0];

describe('gpuResources', () => {
  it.each([
    ['whole GPUs', () => fresh(), { 'nvidia.com/gpu': '4', 'nvidia.com/gpu.shared': '16' }, { 'nvidia.com/gpu': '4', 'nvidia.com/gpu.shared': '16' }],
    [
      'a MIG GPU and an unhealthy one',
      () => {
        const n = fresh();
        n.gpus[0].migLayout = [
          { profile: '3g.40gb', start: 0 },
          { profile: '3g.40gb', start: 4 },
        ];
        n.gpus[1].healthy = false;
        return n;
      },
      { 'nvidia.com/gpu': '3', 'nvidia.com/gpu.shared': '12', 'nvidia.com/mig-3g.40gb': '2' },
      { 'nvidia.com/gpu': '2', 'nvidia.com/gpu.shared': '8', 'nvidia.com/mig-3g.40gb': '2' },
    ],
    [
      'VM passthrough',
      () => {
        const n = fresh();
        n.persona = 'vm-passthrough';
        return n;
      },
      { 'nvidia.com/GH100_H100_SXM5_80GB': '4' },
      { 'nvidia.com/GH100_H100_SXM5_80GB': '4' },
    ],
  ])('%s', (_what, build, wantCapacity, wantAllocatable) => {
    const { capacity, allocatable } = gpuResources(build(), { sharedReplicasPerGpu: 4 });
    expect(capacity).toEqual(wantCapacity);
    expect(allocatable).toEqual(wantAllocatable);
  });

  it('keeps a resource the node advertised before at 0', () => {
    expect(gpuResources(fresh(), { sharedReplicasPerGpu: 0 }, ['nvidia.com/mig-1g.10gb']).capacity).toEqual({
      'nvidia.com/mig-1g.10gb': '0',
      'nvidia.com/gpu': '4',
    });
  });
});

it('writes MicroTime with six fractional digits', () => {
  expect(microTime(new Date('2026-12-01T10:00:00.123Z'))).toBe('2026-12-01T10:00:00.123000Z');
});
