import type { V1Node } from '@kubernetes/client-node';
import { partitionModeLayoutOf } from '@gantry/contracts';
import { gpuModelFromProduct, inventoryNodeFromKubeNode } from './node-inventory';
import { capacityShortfall } from './gpu-capacity';
import { personaReady } from './node-patches';
import { gpuResourceLimits, replicaPod } from './pods';

// The AMD GPU Operator's resources and labels (docs/accelerators.md) mapped by the driver.
const MI = 'MI300X-192GB';

function amdNode(labels: Record<string, string>, capacity: Record<string, string>, annotations: Record<string, string> = {}): V1Node {
  return {
    metadata: {
      name: 'mi300x-0',
      labels: { 'amd.com/gpu.product-name': 'AMD_Instinct_MI300X_OAM', 'amd.com/gpu.vram': '192G', ...labels },
      annotations,
    },
    spec: {},
    status: {
      capacity: { cpu: '128', memory: '1Ti', ...capacity },
      allocatable: { cpu: '128', memory: '1Ti', ...capacity },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
}

describe('AMD GPU Operator on Kubernetes', () => {
  it.each([
    ['AMD_Instinct_MI300X_OAM', 192 * 1024, MI],
    ['AMD-Instinct-MI300X', undefined, MI],
    ['NVIDIA-B200', undefined, 'B200-180GB'],
    ['NVIDIA-H100-80GB-HBM3', undefined, 'H100-80GB'],
    ['AMD_Instinct_MI210', undefined, 'AMD_Instinct_MI210'],
  ])('product %s is model %s', (product, memoryMiB, model) => {
    expect(gpuModelFromProduct(product, memoryMiB)).toBe(model);
  });

  it('a homogeneous CPX/NPS4 node, strategy single: 64 amd.com/gpu are 8 GPUs of 8 partitions', () => {
    const node = inventoryNodeFromKubeNode(amdNode({ 'amd.com/compute-memory-partition': 'cpx_nps4' }, { 'amd.com/gpu': '64' }))!;
    expect(node.gpus).toHaveLength(8);
    for (const g of node.gpus) expect(g.migLayout).toEqual(partitionModeLayoutOf(MI, 'cpx_nps4'));
  });

  it('a mixed node, strategy mixed: whole GPUs and partitions add up; Gantry’s annotation says which GPU has which', () => {
    const annotation = JSON.stringify({ 0: partitionModeLayoutOf(MI, 'qpx_nps1') });
    const node = inventoryNodeFromKubeNode(amdNode({}, { 'amd.com/gpu': '7', 'amd.com/qpx_nps1': '4' }, { 'gantry.io/mig-layouts': annotation }))!;
    expect(node.gpus.map((g) => g.migLayout.length)).toEqual([4, 0, 0, 0, 0, 0, 0, 0]);
    expect(node.gpus[0]!.model).toBe(MI);
  });

  it('a node without the AMD product label or GPU resources is not a GPU node', () => {
    expect(inventoryNodeFromKubeNode(amdNode({}, {}))).toBeUndefined();
  });

  it('pods ask for amd.com/gpu or amd.com/<mode> on AMD nodes; a time-sliced share is refused', () => {
    expect(gpuResourceLimits([{ index: 0 }, { index: 1 }], 'amd')).toEqual({ 'amd.com/gpu': '2' });
    expect(gpuResourceLimits([{ index: 0, migProfile: 'cpx_nps4', migStart: 3 }], 'amd')).toEqual({ 'amd.com/cpx_nps4': '1' });
    expect(gpuResourceLimits([{ index: 0, migProfile: '3g.40gb', migStart: 0 }])).toEqual({ 'nvidia.com/mig-3g.40gb': '1' });
    expect(() => gpuResourceLimits([{ index: 0, milli: 500 }], 'amd')).toThrow(/no time-sliced share/);
    const pod = replicaPod({
      request: { jobId: 'j1', kind: 'notebook', replicas: [{ replica: 0, nodeName: 'mi300x-0', gpus: [{ index: 0, migProfile: 'cpx_nps4', migStart: 0 }] }] },
      replica: { replica: 0, nodeName: 'mi300x-0', gpus: [{ index: 0, migProfile: 'cpx_nps4', migStart: 0 }] },
      namespace: 'gantry',
      defaultImage: 'busybox',
      vendor: 'amd',
    });
    expect(pod.spec!.containers[0]!.resources!.limits).toEqual({ 'amd.com/cpx_nps4': '1' });
    expect(pod.spec!.tolerations![0]!.key).toBe('amd.com/gpu');
  });

  it('capacity checks and persona readiness count amd.com resources', () => {
    const node = amdNode({ 'nvidia.com/gpu.workload.config': 'container' }, { 'amd.com/cpx_nps4': '8' });
    expect(capacityShortfall(node, [], { 'amd.com/cpx_nps4': 8 })).toBeUndefined();
    expect(capacityShortfall(node, [], { 'amd.com/cpx_nps4': 9 })).toBeDefined();
    expect(personaReady(node, 'container')).toBe(true);
  });
});
