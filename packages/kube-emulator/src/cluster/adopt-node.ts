/**
 * Re-adoption after an emulator restart: what the Node object already in the API server says
 * about the hardware state the previous run left (persona, MIG layouts applied, faults), so that
 * a restart neither duplicates nor resets the cluster. Pure function.
 */
import { kubernetesSpecs } from '@gantry/driver';
import type { V1Node } from '@kubernetes/client-node';
import { NIC_CONDITION } from '../health/fault-reports';
import type { EmulatedNode } from './emulated-node';

const { GPU_LABELS, personaFromLabels, migLayoutsOfNode } = kubernetesSpecs;

/** GPU indexes a health fault left unhealthy, e.g. `"3,5"` (written by the health reporter). */
export const UNHEALTHY_GPUS_ANNOTATION = 'kube-emulator.gantry.io/unhealthy-gpus';

/** Takes over the state an existing Node records; the topology still decides the hardware. */
export function adoptNodeState(node: EmulatedNode, existing: V1Node): void {
  const labels = existing.metadata?.labels ?? {};
  const annotations = existing.metadata?.annotations ?? {};
  node.persona = personaFromLabels(labels);
  const model = node.gpus[0]?.model;
  if (model !== undefined && labels[GPU_LABELS.migConfigState] === 'success' && labels[GPU_LABELS.migConfig]) {
    const layouts = migLayoutsOfNode(existing, model, node.gpus.length);
    for (const gpu of node.gpus) gpu.migLayout = (layouts[gpu.index] ?? []).map((s) => ({ ...s }));
    node.appliedMigConfig = labels[GPU_LABELS.migConfig];
  } else {
    // mig-manager had not finished: the configured state is applied again.
    node.appliedMigConfig = '';
  }
  const unhealthy = new Set(
    (annotations[UNHEALTHY_GPUS_ANNOTATION] ?? '')
      .split(',')
      .filter(Boolean)
      .map((i) => Number(i)),
  );
  for (const gpu of node.gpus) gpu.healthy = !unhealthy.has(gpu.index);
  const conditions = existing.status?.conditions ?? [];
  node.down = conditions.some((c) => c.type === 'Ready' && c.status !== 'True');
  node.nicDown = conditions.some((c) => c.type === NIC_CONDITION && c.status === 'True');
}

/** Extended resources the node advertises now (kept at "0" when they go away). */
export function advertisedResources(existing: V1Node): string[] {
  return Object.keys(existing.status?.capacity ?? {}).filter((r) => kubernetesSpecs.isGpuResourceName(r));
}
