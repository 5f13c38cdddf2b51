import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { capacityShortfall, externalGpuUseByNode, gpuRequestsOf } from './gpu-capacity';

const pod = (nodeName: string, limits: Record<string, string>, extra: { gantry?: boolean; phase?: string } = {}): V1Pod => ({
  metadata: { name: 'p', labels: extra.gantry ? { 'gantry.io/job-id': 'j' } : {} },
  spec: { nodeName, containers: [{ name: 'c', resources: { limits } }] },
  status: { phase: extra.phase ?? 'Running' },
});
const node: V1Node = { status: { allocatable: { 'nvidia.com/gpu': '8', 'nvidia.com/mig-1g.10gb': '7' } } };

describe('GPU capacity', () => {
  it('sums containers and keeps the largest init container', () => {
    const p: V1Pod = {
      spec: {
        containers: [
          { name: 'a', resources: { limits: { 'nvidia.com/gpu': '2', cpu: '1' } } },
          { name: 'b', resources: { requests: { 'nvidia.com/gpu': '1' } } },
        ],
        initContainers: [{ name: 'i', resources: { limits: { 'nvidia.com/gpu': '4' } } }],
      },
    };
    expect(gpuRequestsOf(p)).toEqual({ 'nvidia.com/gpu': 4 });
  });

  it('counts only unfinished pods Gantry did not create as external use', () => {
    const use = externalGpuUseByNode([
      pod('n1', { 'nvidia.com/gpu': '2' }),
      pod('n1', { 'nvidia.com/gpu': '1' }, { gantry: true }),
      pod('n1', { 'nvidia.com/gpu': '4' }, { phase: 'Succeeded' }),
      pod('n2', { cpu: '1' }),
    ]);
    expect([...use]).toEqual([['n1', { 'nvidia.com/gpu': 2 }]]);
  });

  it.each<{ name: string; pods: V1Pod[]; wanted: Record<string, number>; wantShort: RegExp | undefined }>([
    { name: 'fits', pods: [pod('n1', { 'nvidia.com/gpu': '6' })], wanted: { 'nvidia.com/gpu': 2 }, wantShort: undefined },
    {
      name: 'one too many',
      pods: [pod('n1', { 'nvidia.com/gpu': '6' })],
      wanted: { 'nvidia.com/gpu': 3 },
      wantShort: /8 allocatable, 6 in use \(6 by pods Gantry did not create\), 3 asked/,
    },
    {
      name: "Gantry's own pods count too",
      pods: [pod('n1', { 'nvidia.com/gpu': '7' }, { gantry: true })],
      wanted: { 'nvidia.com/gpu': 2 },
      wantShort: /7 in use \(0 by/,
    },
    { name: 'a resource the node does not advertise', pods: [], wanted: { 'nvidia.com/mig-3g.40gb': 1 }, wantShort: /mig-3g.40gb: 0 allocatable/ },
    {
      name: 'finished pods free their GPUs',
      pods: [pod('n1', { 'nvidia.com/gpu': '8' }, { phase: 'Failed' })],
      wanted: { 'nvidia.com/gpu': 8 },
      wantShort: undefined,
    },
  ])('$name', ({ pods, wanted, wantShort }) => {
    const short = capacityShortfall(node, pods, wanted);
    if (wantShort === undefined) expect(short).toBeUndefined();
    else expect(short).toMatch(wantShort);
  });
});
