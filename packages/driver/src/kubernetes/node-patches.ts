/**
 * JSON merge patches (`application/merge-patch+json`) for Node objects, and the readiness checks
 * that tell when the GPU Operator has acted on them. Pure functions.
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import type { Persona } from '../types';
import { AMD_GPU_LABELS, GANTRY_ANNOTATIONS, GANTRY_LABELS, GPU_LABELS, GPU_RESOURCE, isGpuResourceName, SHARED_GPU_RESOURCE } from '../shared/labels';
import { normalizeMigLayouts, type NodeMigLayouts } from './mig-config';
import { isNodeReady } from './node-inventory';

/** A merge patch: `null` deletes a key. */
export type NodePatch = {
  metadata?: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> };
  spec?: { unschedulable?: boolean; taints?: V1Taint[] | null };
};

/** Cordon (`true`) or uncordon (`false`). */
export function cordonPatch(unschedulable: boolean): NodePatch {
  return { spec: { unschedulable } };
}

/**
 * Asks mig-manager for `configName` and records the layouts it stands for. The stale
 * `mig.config.state` is removed so that waiting for `success` waits for this change.
 */
export function migConfigPatch(configName: string, layouts: NodeMigLayouts): NodePatch {
  return {
    metadata: {
      labels: { [GPU_LABELS.migConfig]: configName, [GPU_LABELS.migConfigState]: null },
      annotations: { [GANTRY_ANNOTATIONS.migLayouts]: JSON.stringify(normalizeMigLayouts(layouts)) },
    },
  };
}

/**
 * Asks the Device Config Manager for profile `profileName` (AMD): the node tainted `amd-dcm=up:NoExecute`
 * as DCM's docs have it (`taints`: the node's, with it), the stale state label removed so that
 * waiting for `success` waits for this change, and the layouts it stands for recorded.
 */
export function dcmProfilePatch(profileName: string, layouts: NodeMigLayouts, taints: V1Taint[]): NodePatch {
  return {
    metadata: {
      labels: { [AMD_GPU_LABELS.configProfile]: profileName, [AMD_GPU_LABELS.configProfileState]: null },
      annotations: { [GANTRY_ANNOTATIONS.migLayouts]: JSON.stringify(normalizeMigLayouts(layouts)) },
    },
    spec: { taints },
  };
}

/** The operator's workload config for a Gantry persona (`inference` nodes run containers). */
export function workloadConfigOf(persona: Persona): 'container' | 'vm-passthrough' {
  return persona === 'vm-passthrough' ? 'vm-passthrough' : 'container';
}

export function personaPatch(persona: Persona): NodePatch {
  return { metadata: { labels: { [GPU_LABELS.workloadConfig]: workloadConfigOf(persona), [GANTRY_LABELS.persona]: persona } } };
}

export type MigApplyProgress = 'applied' | 'failed' | 'waiting';

/** Where mig-manager stands on `configName` for this node. */
export function migApplyProgress(node: V1Node, configName: string): MigApplyProgress {
  const labels = node.metadata?.labels ?? {};
  if (labels[GPU_LABELS.migConfig] !== configName) return 'waiting';
  const state = labels[GPU_LABELS.migConfigState];
  if (state === 'success') return 'applied';
  if (state === 'failed') return 'failed';
  return 'waiting';
}

/**
 * Whether the node runs `persona`: it is Ready, labelled for it, and advertises the matching GPU
 * resources: `nvidia.com/gpu` or `nvidia.com/mig-*` for containers, a passthrough device
 * resource (`nvidia.com/<GPU type>`, e.g. `nvidia.com/GH100_H100_SXM5_80GB`) for VMs.
 */
export function personaReady(node: V1Node, persona: Persona): boolean {
  const labels = node.metadata?.labels ?? {};
  if (!isNodeReady(node) || labels[GPU_LABELS.workloadConfig] !== workloadConfigOf(persona)) return false;
  const advertised = Object.entries(node.status?.allocatable ?? {})
    .filter(([resource, amount]) => isGpuResourceName(resource) && Number(amount) > 0)
    .map(([resource]) => resource);
  // Whole GPUs, MIG slices and time-sliced shares serve containers; anything else (a VFIO device) serves VMs.
  const containerResource = (r: string) => r === GPU_RESOURCE || r === SHARED_GPU_RESOURCE || r.startsWith('nvidia.com/mig-') || r.startsWith('amd.com/');
  return persona === 'vm-passthrough' ? advertised.some((r) => !containerResource(r)) : advertised.some(containerResource);
}
