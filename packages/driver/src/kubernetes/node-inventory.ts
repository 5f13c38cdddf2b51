/**
 * Inventory from Kubernetes Node objects: GPU feature discovery labels for the GPUs, Topograph
 * (or the well-known zone/region) labels for the leaf and spine, the operator's workload config
 * for the persona, and Gantry's MIG annotation for the layouts. Pure functions.
 */
import { GPU_MODEL_SPECS, PERSONAS } from '@gantry/contracts';
import type { V1Node } from '@kubernetes/client-node';
import { powerStateOfLabels } from './power-hook';
import { GANTRY_ANNOTATIONS, GANTRY_LABELS, GPU_LABELS, TOPOLOGY_LABELS } from '../shared/labels';
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

/**
 * Gantry's GPU model name for a GPU feature discovery product, e.g. `NVIDIA-H100-80GB-HBM3` ->
 * `H100-80GB`, `NVIDIA-A100-SXM4-40GB` -> `A100-40GB`, `NVIDIA-H200` (+ 143771 MiB) -> `H200-141GB`.
 * MIG (`-MIG-1g.10gb`) and time-slicing (`-SHARED`) suffixes are ignored. Unknown products are
 * returned as they are.
 */
export function gpuModelFromProduct(product: string, memoryMiB?: number): string {
  const base = product.replace(/-MIG-.*$/, '').replace(/-SHARED$/, '');
  const family = /\b(H200|H100|A100)\b/i.exec(base.replace(/-/g, ' '))?.[1]?.toUpperCase();
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

/** The node as Gantry inventory, or undefined when it carries no GPU discovery labels. */
export function inventoryNodeFromKubeNode(node: V1Node): InventoryNode | undefined {
  const labels = node.metadata?.labels ?? {};
  const gpuCount = Number.parseInt(labels[GPU_LABELS.count] ?? '', 10);
  const product = labels[GPU_LABELS.product];
  if (!(gpuCount > 0) || !product) return undefined;
  const labelMemory = Number.parseInt(labels[GPU_LABELS.memoryMiB] ?? '', 10);
  const model = gpuModelFromProduct(product, labelMemory || undefined);
  const memoryMiB = labelMemory || GPU_MODEL_SPECS[model]?.memoryMiB || 0;
  const migCapable = labels[GPU_LABELS.migCapable] === 'true' || (labels[GPU_LABELS.migCapable] === undefined && isMigCapable(model));
  const layouts = migLayoutsOfNode(node, model, gpuCount);
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
