import { partitionModeLayoutOf } from '@gantry/contracts';
import { generateTopology, kubernetesSpecs } from '@gantry/driver';
import { emulatedNodesOf } from './emulated-node';
import { gpuResources, nodeObject } from './node-objects';

// The emulator registers AMD nodes as the AMD GPU Operator leaves them (node labeller labels,
// device plugin resources in strategy mixed), and the Kubernetes driver reads them back.
const MI = 'MI300X-192GB';
const OPTIONS = { sharedReplicasPerGpu: 4, leaseDurationSeconds: 40 };
const fresh = () => emulatedNodesOf(generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 4, models: [MI] }))[0]!;
const cpx4 = () => partitionModeLayoutOf(MI, 'cpx_nps4')!;

describe('AMD MI300X nodes in the kube-emulator', () => {
  it('whole (SPX) GPUs: amd.com/gpu, no NVIDIA label or resource, no time-sliced shares', () => {
    const node = nodeObject(fresh(), OPTIONS, new Date(0));
    const labels = node.metadata!.labels!;
    expect(labels).toMatchObject({
      'amd.com/gpu.product-name': 'AMD_Instinct_MI300X_OAM',
      'amd.com/gpu.vram': '192G',
      'amd.com/compute-partitioning-supported': 'true',
      'amd.com/memory-partitioning-supported': 'true',
      'amd.com/compute-memory-partition': 'spx_nps1',
    });
    expect(Object.keys(labels).filter((k) => k.startsWith('nvidia.com/'))).toEqual([]);
    expect(gpuResources(fresh(), OPTIONS).capacity).toEqual({ 'amd.com/gpu': '4' });
  });

  it('partitioned GPUs: amd.com/<mode> per partition; the mode label only when every GPU has the same mode', () => {
    const n = fresh();
    n.gpus[0]!.migLayout = cpx4();
    n.gpus[1]!.migLayout = cpx4();
    n.gpus[2]!.healthy = false;
    expect(gpuResources(n, OPTIONS)).toEqual({
      capacity: { 'amd.com/cpx_nps4': '16', 'amd.com/gpu': '2' },
      allocatable: { 'amd.com/cpx_nps4': '16', 'amd.com/gpu': '1' },
    });
    expect(nodeObject(n, OPTIONS, new Date(0)).metadata!.labels!['amd.com/compute-memory-partition']).toBeUndefined();
    for (const g of n.gpus) g.migLayout = partitionModeLayoutOf(MI, 'dpx_nps1')!;
    expect(nodeObject(n, OPTIONS, new Date(0)).metadata!.labels!['amd.com/compute-memory-partition']).toBe('dpx_nps1');
  });

  it('the Kubernetes driver reads the node back: model, GPU count, layouts', () => {
    const n = fresh();
    n.gpus[3]!.migLayout = cpx4();
    const inventory = kubernetesSpecs.inventoryNodeFromKubeNode(nodeObject(n, OPTIONS, new Date(0)))!;
    expect(inventory.gpus.map((g) => [g.index, g.model, g.migLayout.length])).toEqual([
      [0, MI, 0],
      [1, MI, 0],
      [2, MI, 0],
      [3, MI, 8],
    ]);
    expect(inventory.gpus[3]!.migCapable).toBe(true);
    expect(inventory.gpus[0]!.memoryMiB).toBe(196592);
  });
});
