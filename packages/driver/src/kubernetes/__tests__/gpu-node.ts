/** A GPU Node object as GPU feature discovery and Topograph label one (test helper; H100 HGX by default). */
import type { V1Node } from '@kubernetes/client-node';

export interface GpuNodeSpec {
  name: string;
  product?: string;
  gpuCount?: number;
  gpuMemoryMiB?: number;
  labels?: Record<string, string>;
}

export function gpuNodeObject(spec: GpuNodeSpec): V1Node {
  const gpuCount = spec.gpuCount ?? 8;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels: {
        'kubernetes.io/hostname': spec.name,
        'nvidia.com/gpu.present': 'true',
        'nvidia.com/gpu.product': spec.product ?? 'NVIDIA-H100-80GB-HBM3',
        'nvidia.com/gpu.count': String(gpuCount),
        'nvidia.com/gpu.memory': String(spec.gpuMemoryMiB ?? 81559),
        'nvidia.com/mig.capable': 'true',
        'nvidia.com/mig.config': 'all-disabled',
        'nvidia.com/mig.config.state': 'success',
        'fabric.topograph.run/tier-0': 'leaf-a',
        'fabric.topograph.run/tier-1': 'spine-a',
        ...spec.labels,
      },
      annotations: {},
    },
    spec: {},
    status: {
      allocatable: { cpu: '128', memory: '1073741824Ki', 'nvidia.com/gpu': String(gpuCount) },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  } as unknown as V1Node;
}
