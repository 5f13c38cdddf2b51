/**
 * Inventory from Kubernetes Node objects: GPU feature discovery labels for the GPUs, Topograph
 * (or the well-known zone/region) labels for the leaf and spine, the operator's workload config
 * for the persona, and Gantry's MIG annotation for the layouts. Pure functions.
 */
import { GPU_MODEL_SPECS, PERSONAS, migProfile, partitionModeLayoutOf } from '@gantry/contracts';
import type { V1Node } from '@kubernetes/client-node';
import { powerStateOfLabels } from './power-hook';
import { AMD_GPU_LABELS, AMD_GPU_RESOURCE, GANTRY_ANNOTATIONS, GANTRY_LABELS, GPU_LABELS, gpuVendorOfLabels, TOPOLOGY_LABELS } from '../shared/labels';
import { isMigCapable } from '../shared/mig-layout';
import type { InventoryNode, MigSliceSpec, Persona } from '../types';
import { xidEffect } from '../shared/xid';
import { nodeHealthOf } from './health-signals';
import { layoutOfNamedConfig, migConfigName, type NodeMigLayouts } from './mig-config';
import { cpuMilliOf, memoryMiBOf } from './quantities';

export const UNKNOWN_TOPOLOGY = 'unknown';

const GANTRY_MODELS: { family: string; gb: number; model: string }[] = Object.values(GPU_MODEL_SPECS).map(({ model, memoryGB }) => ({
  family: model.split('-')[0],
  gb: memoryGB,
  model,
}));

const FAMILIES = new RegExp(`\\b(${[...new Set(GANTRY_MODELS.map((m) => m.family))].join('|')})\\b`, 'i');

/**
 * Gantry's GPU model name for a GPU feature discovery product, e.g. `NVIDIA-H100-80GB-HBM3` ->
 * `H100-80GB`, `NVIDIA-A100-SXM4-40GB` -> `A100-40GB`, `NVIDIA-H200` (+ 143771 MiB) -> `H200-141GB`,
 * or an AMD node labeller product name, `AMD_Instinct_MI300X_OAM` -> `MI300X-192GB`. The families
 * are the catalog's. MIG (`-MIG-1g.10gb`) and time-slicing (`-SHARED`) suffixes are ignored.
 * Unknown products are returned as they are.
 */
export function gpuModelFromProduct(product: string, memoryMiB?: number): string {
  const base = product.replace(/-MIG-.*$/, '').replace(/-SHARED$/, '');
  const family = FAMILIES.exec(base.replace(/[-_]/g, ' '))?.[1]?.toUpperCase();
  const candidates = GANTRY_MODELS.filter((m) => m.family === family);
  if (candidates.length === 0) return base;
  const productGb = /(\d+)GB/i.exec(base)?.[1];
  const gb = productGb ? Number(productGb) : memoryMiB ? memoryMiB / 1024 : candidates[0].gb;
  return candidates.reduce((best, m) => (Math.abs(m.gb - gb) < Math.abs(best.gb - gb) ? m : best)).model;
}

/** Gantry persona: `gantry.io/persona` when set, else from `nvidia.com/gpu.workload.config`. */
export function personaFromLabels(labels: Record<string, string>): Persona {
  const gantry = labels[GANTRY_LABELS.persona];
  if ((PERSONAS as readonly string[]).includes(gantry)) return gantry as Persona;
  const workload = labels[GPU_LABELS.workloadConfig];
  return workload === 'vm-passthrough' || workload === 'vm-vgpu' ? 'vm-passthrough' : 'container';
}

/**
 * The node's MIG layouts: Gantry's annotation while the node's config label is the one derived
 * from it, else the layout of a stock operator config on every GPU, else MIG off.
 */
export function migLayoutsOfNode(node: V1Node, model: string, gpuCount: number): NodeMigLayouts {
  const labels = node.metadata?.labels ?? {};
  const configName = labels[GPU_LABELS.migConfig];
  const annotated = parseMigLayoutsAnnotation(node.metadata?.annotations?.[GANTRY_ANNOTATIONS.migLayouts]);
  if (annotated && configName === migConfigName(annotated)) return annotated;
  const stock = configName === undefined ? undefined : layoutOfNamedConfig(model, configName);
  const layouts: NodeMigLayouts = {};
  for (let index = 0; index < gpuCount; index++) layouts[index] = stock ? stock.map((s) => ({ ...s })) : [];
  return layouts;
}

/** Ready condition `True` and no unreachable/not-ready taint (health-signals.ts). */
export function isNodeReady(node: V1Node): boolean {
  return nodeHealthOf(node).ready;
}

interface NodeGpus {
  model: string;
  memoryMiB: number;
  gpuCount: number;
  migCapable: boolean;
  layouts: NodeMigLayouts;
}

/** NVIDIA: GPU feature discovery labels, the mig-manager config label and Gantry's annotation. */
function nvidiaGpusOf(node: V1Node): NodeGpus | undefined {
  const labels = node.metadata?.labels ?? {};
  const gpuCount = Number.parseInt(labels[GPU_LABELS.count] ?? '', 10);
  const product = labels[GPU_LABELS.product];
  if (!(gpuCount > 0) || !product) return undefined;
  const labelMemory = Number.parseInt(labels[GPU_LABELS.memoryMiB] ?? '', 10);
  const model = gpuModelFromProduct(product, labelMemory || undefined);
  const memoryMiB = labelMemory || GPU_MODEL_SPECS[model]?.memoryMiB || 0;
  const migCapable = labels[GPU_LABELS.migCapable] === 'true' || (labels[GPU_LABELS.migCapable] === undefined && isMigCapable(model));
  return { model, memoryMiB, gpuCount, migCapable, layouts: migLayoutsOfNode(node, model, gpuCount) };
}

/**
 * AMD: the node labeller's product name and VRAM, the device plugin's resources for the count
 * (`amd.com/gpu` and `amd.com/<mode>` partitions, each partition 1/partitions of a GPU), and the
 * partition modes: Gantry's annotation when it has one, else the node's homogeneous mode label
 * (`amd.com/compute-memory-partition`, SPX/NPS1 when absent) on every GPU.
 */
export function amdGpusOf(node: V1Node): NodeGpus | undefined {
  const labels = node.metadata?.labels ?? {};
  const product = labels[AMD_GPU_LABELS.productName];
  if (!product) return undefined;
  const vramGiB = Number.parseInt(labels[AMD_GPU_LABELS.vram] ?? '', 10);
  const model = gpuModelFromProduct(product, vramGiB > 0 ? vramGiB * 1024 : undefined);
  const memoryMiB = GPU_MODEL_SPECS[model]?.memoryMiB ?? (vramGiB > 0 ? vramGiB * 1024 : 0);
  const modeLabel = labels[AMD_GPU_LABELS.computeMemoryPartition] ?? '';
  const labelMode = migProfile(model, modeLabel);
  let count = 0;
  for (const [resource, amount] of Object.entries(node.status?.capacity ?? {})) {
    if (resource === AMD_GPU_RESOURCE) count += Number(amount) / (labelMode?.maxPerGpu ?? 1);
    else if (resource.startsWith('amd.com/')) {
      const p = migProfile(model, resource.slice('amd.com/'.length));
      if (p) count += Number(amount) / p.maxPerGpu;
    }
  }
  const gpuCount = Math.round(count);
  if (!(gpuCount > 0)) return undefined;
  const annotated = parseMigLayoutsAnnotation(node.metadata?.annotations?.[GANTRY_ANNOTATIONS.migLayouts]);
  const layouts: NodeMigLayouts = {};
  for (let index = 0; index < gpuCount; index++) {
    layouts[index] = annotated ? (annotated[index] ?? []) : labelMode ? (partitionModeLayoutOf(model, labelMode.name) ?? []) : [];
  }
  return { model, memoryMiB, gpuCount, migCapable: labels[AMD_GPU_LABELS.computePartitioningSupported] === 'true' || isMigCapable(model), layouts };
}

/** The node as Gantry inventory, or undefined when it carries no GPU discovery labels (NVIDIA's or AMD's). */
export function inventoryNodeFromKubeNode(node: V1Node): InventoryNode | undefined {
  const labels = node.metadata?.labels ?? {};
  const gpus = gpuVendorOfLabels(labels) === 'amd' ? amdGpusOf(node) : nvidiaGpusOf(node);
  if (!gpus) return undefined;
  const { model, memoryMiB, gpuCount, migCapable, layouts } = gpus;
  const allocatable = node.status?.allocatable ?? {};
  const health = nodeHealthOf(node);
  const unhealthyGpus = new Set(health.xids.filter((x) => xidEffect(x.xid).gpuUnhealthy).map((x) => x.gpuIndex));
  return {
    name: node.metadata?.name ?? '',
    leaf: labels[TOPOLOGY_LABELS.leaf] ?? labels[TOPOLOGY_LABELS.zone] ?? UNKNOWN_TOPOLOGY,
    spine: labels[TOPOLOGY_LABELS.spine] ?? labels[TOPOLOGY_LABELS.region] ?? UNKNOWN_TOPOLOGY,
    cpuMilli: cpuMilliOf(allocatable.cpu),
    memoryMiB: memoryMiBOf(allocatable.memory),
    persona: personaFromLabels(labels),
    labels: { ...labels },
    // GPU feature discovery says nothing of NVLink inside a node: HGX boards are one NVSwitch domain.
    gpus: Array.from({ length: gpuCount }, (_, index) => ({
      index,
      model,
      memoryMiB,
      nvlinkDomain: 0,
      migCapable,
      migLayout: layouts[index] ?? [],
      health: unhealthyGpus.has(index) ? ('unhealthy' as const) : ('healthy' as const),
    })),
    unschedulable: node.spec?.unschedulable === true,
    ready: health.ready,
    networkUp: health.networkUp,
    powerState: powerStateOfLabels(labels),
  };
}

function parseMigLayoutsAnnotation(value: string | undefined): NodeMigLayouts | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as Record<string, MigSliceSpec[]>;
    const layouts: NodeMigLayouts = {};
    for (const [index, layout] of Object.entries(parsed)) {
      if (!Array.isArray(layout)) return undefined;
      layouts[Number(index)] = layout.map(({ profile, start }) => ({ profile, start }));
    }
    return layouts;
  } catch {
    return undefined;
  }
}
