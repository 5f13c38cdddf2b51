/**
 * GPU capacity of a node as the device plugin sees it: the extended resources it advertises
 * (`status.allocatable`) against what every unfinished pod bound to the node requests, whoever
 * created it. A pod Gantry did not create is used capacity like any other: the driver refuses to
 * start a replica that would not fit (the kubelet would reject the pod), and reports such pods'
 * share in the inventory (`externalGpuUse`). Pure functions.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { GANTRY_LABELS, isGpuResourceName } from '../shared/labels';
import { isPodFinished } from './pods';

const isGpuResource = isGpuResourceName;

/**
 * The GPU resources (`nvidia.com/*`, `amd.com/*`) a pod holds: for each resource, the sum over its containers,
 * or the largest init container if that is more (the scheduler's rule). Extended resources have
 * requests equal to limits; either is read.
 */
export function gpuRequestsOf(pod: V1Pod): Record<string, number> {
  const sum: Record<string, number> = {};
  const amounts = (c: { resources?: { limits?: Record<string, unknown>; requests?: Record<string, unknown> } }) =>
    Object.entries({ ...c.resources?.requests, ...c.resources?.limits }).filter(([r]) => isGpuResource(r));
  for (const container of pod.spec?.containers ?? []) {
    for (const [resource, amount] of amounts(container)) sum[resource] = (sum[resource] ?? 0) + Number(amount);
  }
  for (const init of pod.spec?.initContainers ?? []) {
    for (const [resource, amount] of amounts(init)) sum[resource] = Math.max(sum[resource] ?? 0, Number(amount));
  }
  return sum;
}

export const isGantryPod = (pod: V1Pod): boolean => pod.metadata?.labels?.[GANTRY_LABELS.jobId] !== undefined;

/** GPU resources held on each node by unfinished pods Gantry did not create. */
export function externalGpuUseByNode(pods: readonly V1Pod[]): Map<string, Record<string, number>> {
  const byNode = new Map<string, Record<string, number>>();
  for (const pod of pods) {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName || isPodFinished(pod) || isGantryPod(pod)) continue;
    const use = byNode.get(nodeName) ?? {};
    for (const [resource, amount] of Object.entries(gpuRequestsOf(pod))) use[resource] = (use[resource] ?? 0) + amount;
    if (Object.keys(use).length) byNode.set(nodeName, use);
  }
  return byNode;
}

/**
 * Why `wanted` does not fit on the node next to `pods` (the unfinished pods bound to it, not
 * counting the job being started), or undefined when it fits.
 */
export function capacityShortfall(node: V1Node, pods: readonly V1Pod[], wanted: Record<string, string | number>): string | undefined {
  const allocatable = node.status?.allocatable ?? {};
  const used: Record<string, number> = {};
  const external: Record<string, number> = {};
  for (const pod of pods) {
    if (isPodFinished(pod)) continue;
    for (const [resource, amount] of Object.entries(gpuRequestsOf(pod))) {
      used[resource] = (used[resource] ?? 0) + amount;
      if (!isGantryPod(pod)) external[resource] = (external[resource] ?? 0) + amount;
    }
  }
  const short = Object.entries(wanted)
    .map(([resource, amount]) => ({ resource, want: Number(amount), have: Number(allocatable[resource] ?? 0), used: used[resource] ?? 0 }))
    .filter((r) => r.used + r.want > r.have);
  if (short.length === 0) return undefined;
  return short
    .map((r) => `${r.resource}: ${r.have} allocatable, ${r.used} in use (${external[r.resource] ?? 0} by pods Gantry did not create), ${r.want} asked`)
    .join('; ');
}
