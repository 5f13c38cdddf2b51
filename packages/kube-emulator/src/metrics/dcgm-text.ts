/**
 * dcgm-exporter's Prometheus text for the emulated GPUs: one sample per GPU and field, labelled
 * as dcgm-exporter labels them (`gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`,
 * `DCGM_FI_DRIVER_VERSION`, and in Kubernetes mode the `container`, `namespace` and `pod` using
 * the GPU). Values follow what runs: a busy GPU shows SM utilisation, framebuffer and power in
 * proportion to the part of it in use (whole, MIG slice, time-sliced share). The driver's
 * parseDcgmMetrics reads it back. Pure functions.
 */
import { gpuPower, migSliceFraction } from '@gantry/contracts';
import { findMigProfile, kubernetesSpecs } from '@gantry/driver';
import type { EmulatedNode } from '../cluster/emulated-node';
import { gpuProductNames } from '../cluster/gpu-products';
import { pciBusId } from '../health/fault-reports';

export const DRIVER_VERSION = '550.54.15';

export interface GpuUser {
  namespace: string;
  pod: string;
  container: string;
  /** Extended resources the pod holds on this node. */
  resources: Record<string, number>;
  gpuIndexes: number[];
}

export interface GpuLoad {
  compute: number;
  memory: number;
  user?: GpuUser;
}

const FIELDS: { name: string; type: 'gauge' | 'counter'; help: string }[] = [
  { name: 'DCGM_FI_DEV_GPU_UTIL', type: 'gauge', help: 'GPU utilization (in %).' },
  { name: 'DCGM_FI_DEV_FB_USED', type: 'gauge', help: 'Framebuffer memory used (in MiB).' },
  { name: 'DCGM_FI_DEV_FB_FREE', type: 'gauge', help: 'Framebuffer memory free (in MiB).' },
  { name: 'DCGM_FI_DEV_POWER_USAGE', type: 'gauge', help: 'Power draw (in W).' },
  { name: 'DCGM_FI_DEV_GPU_TEMP', type: 'gauge', help: 'GPU temperature (in C).' },
  { name: 'DCGM_FI_DEV_XID_ERRORS', type: 'gauge', help: 'Value of the last XID error encountered.' },
  { name: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', type: 'gauge', help: 'Ratio of time the graphics engine is active.' },
];

/** Load per GPU index from the pods holding the node's GPUs. */
export function gpuLoads(node: EmulatedNode, users: readonly GpuUser[], sharedReplicasPerGpu: number): Map<number, GpuLoad> {
  const loads = new Map<number, GpuLoad>();
  const add = (index: number, compute: number, memory: number, user: GpuUser) => {
    const load = loads.get(index) ?? { compute: 0, memory: 0 };
    loads.set(index, { compute: Math.min(1, load.compute + compute), memory: Math.min(1, load.memory + memory), user: load.user ?? user });
  };
  for (const user of users) {
    for (const index of user.gpuIndexes) {
      const gpu = node.gpus[index];
      if (!gpu) continue;
      for (const [resource, amount] of Object.entries(user.resources)) {
        if (resource === kubernetesSpecs.GPU_RESOURCE) add(index, 1, 1, user);
        else if (resource === kubernetesSpecs.SHARED_GPU_RESOURCE)
          add(index, amount / Math.max(1, sharedReplicasPerGpu), amount / Math.max(1, sharedReplicasPerGpu), user);
        else if (resource.startsWith('nvidia.com/mig-')) {
          const profile = findMigProfile(gpu.model, resource.slice('nvidia.com/mig-'.length));
          if (profile) add(index, (migSliceFraction(profile.name, gpu.model) ?? 0) * amount, (profile.memorySlots / 8) * amount, user);
        }
      }
    }
  }
  return loads;
}

/** The exporter's page for some nodes at `at` (ms); nodes that are down export nothing. */
export function dcgmMetricsText(nodes: readonly { node: EmulatedNode; loads: Map<number, GpuLoad> }[], at: number): string {
  const lines = new Map<string, string[]>(FIELDS.map((f) => [f.name, []]));
  for (const { node, loads } of nodes) {
    if (node.down) continue;
    for (const gpu of node.gpus) {
      const load = loads.get(gpu.index) ?? { compute: 0, memory: 0 };
      const { idleW, busyW } = gpuPower(gpu.model);
      const util = load.compute === 0 || !gpu.healthy ? 0 : Math.min(100, Math.round(load.compute * (90 + wobble(node.name, gpu.index, at))));
      const used = gpu.healthy ? Math.round(load.memory * 0.85 * gpu.memoryMiB) : 0;
      const labels = [
        `gpu="${gpu.index}"`,
        `UUID="${gpu.uuid}"`,
        `pci_bus_id="${pciBusId(gpu.index)}"`,
        `device="nvidia${gpu.index}"`,
        `modelName="${gpuProductNames(gpu.model).nvmlName}"`,
        `Hostname="${node.name}"`,
        `DCGM_FI_DRIVER_VERSION="${DRIVER_VERSION}"`,
        ...(load.user ? [`container="${load.user.container}"`, `namespace="${load.user.namespace}"`, `pod="${load.user.pod}"`] : []),
      ].join(',');
      const values: Record<string, number> = {
        DCGM_FI_DEV_GPU_UTIL: util,
        DCGM_FI_DEV_FB_USED: used,
        DCGM_FI_DEV_FB_FREE: gpu.memoryMiB - used,
        DCGM_FI_DEV_POWER_USAGE: Math.round((idleW + ((busyW - idleW) * util) / 100) * 1000) / 1000,
        DCGM_FI_DEV_GPU_TEMP: Math.round(32 + util * 0.4),
        DCGM_FI_DEV_XID_ERRORS: gpu.lastXid,
        DCGM_FI_PROF_GR_ENGINE_ACTIVE: Math.round((util / 100) * 1000) / 1000,
      };
      for (const field of FIELDS) lines.get(field.name)!.push(`${field.name}{${labels}} ${values[field.name]}`);
    }
  }
  return FIELDS.map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...lines.get(f.name)!].join('\n')).join('\n') + '\n';
}

/** 0..8 points, stable within a second for a GPU (no randomness). */
function wobble(nodeName: string, gpuIndex: number, at: number): number {
  let hash = gpuIndex * 31 + Math.floor(at / 1000);
  for (let i = 0; i < nodeName.length; i++) hash = (hash * 33 + nodeName.charCodeAt(i)) >>> 0;
  return hash % 9;
}
