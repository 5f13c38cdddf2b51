/**
 * The emulator's memory of one node: what the topology file says it is, and what the hardware
 * would know that the API server does not (GPU health, MIG layouts actually applied, the
 * persona actually running, whether the node and its NIC are up).
 */
import { createHash } from 'node:crypto';
import { isMigCapable, kubernetesSpecs, topologyNodes, type MigSliceSpec, type Persona, type Topology } from '@gantry/driver';

export interface EmulatedGpu {
  index: number;
  model: string;
  memoryMiB: number;
  uuid: string;
  /** MIG layout in force (empty: MIG off). */
  migLayout: MigSliceSpec[];
  healthy: boolean;
  /** Last Xid reported on this GPU (0: none). */
  lastXid: number;
  /** A defect idle checks miss (fault `latent`): a burn-in on this GPU fails; resets and reboots leave it. */
  latentFault: boolean;
}

export interface EmulatedNode {
  name: string;
  leaf: string;
  spine: string;
  cpuMilli: number;
  memoryMiB: number;
  labels: Record<string, string>;
  gpus: EmulatedGpu[];
  /** Persona running now (the operator's workload config, Gantry's persona). */
  persona: Persona;
  /** Kubelet stopped: no heartbeats, Ready=Unknown. */
  down: boolean;
  nicDown: boolean;
  /** mig.config name applied (mig-manager's last success); empty when unknown or not MIG-capable. */
  appliedMigConfig: string;
  /** The operator is swapping the node's GPU stack: no GPU resources meanwhile. */
  switchingPersona: boolean;
}

/** Every node of the topology, in file order, with stable GPU UUIDs. */
export function emulatedNodesOf(topology: Topology): EmulatedNode[] {
  return topologyNodes(topology).map(({ node, leaf, spine }) => {
    const emulated: EmulatedNode = {
      name: node.name,
      leaf,
      spine,
      cpuMilli: node.cpuMilli,
      memoryMiB: node.memoryMiB,
      labels: { ...node.labels },
      gpus: node.gpus.map((gpu, index) => ({
        index,
        model: gpu.model,
        memoryMiB: gpu.memoryMiB,
        uuid: gpuUuid(node.name, index),
        migLayout: (gpu.migLayout ?? []).map((s) => ({ ...s })),
        healthy: true,
        lastXid: 0,
        latentFault: false,
      })),
      persona: node.persona ?? 'container',
      down: false,
      nicDown: false,
      appliedMigConfig: '',
      switchingPersona: false,
    };
    if (emulated.gpus[0] && isMigCapable(emulated.gpus[0].model)) {
      emulated.appliedMigConfig = kubernetesSpecs.migConfigName(Object.fromEntries(emulated.gpus.map((g) => [g.index, g.migLayout])));
    }
    return emulated;
  });
}

/** `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, the same for a node name and index on every run. */
export function gpuUuid(nodeName: string, index: number): string {
  const hex = createHash('sha1').update(`${nodeName}/${index}`).digest('hex');
  return `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
