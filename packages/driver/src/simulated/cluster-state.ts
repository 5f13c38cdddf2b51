/**
 * The mutable state of the simulated cluster: nodes (persona, cordon, health) and their GPUs
 * (MIG layout, health). Lookups throw errors that name the missing node or GPU.
 */
import { GPU_LABELS, TOPOLOGY_LABELS } from '../shared/labels';
import type { Inventory, InventoryNode, MigSliceSpec, NodePowerState, Persona } from '../types';
import { isMigCapable } from '../shared/mig-layout';
import { topologyNodes, type Topology } from './topology';

export interface SimGpu {
  index: number;
  model: string;
  memoryMiB: number;
  nvlinkDomain: number;
  migCapable: boolean;
  migLayout: MigSliceSpec[];
  healthy: boolean;
  /** A defect idle checks miss: shows only under load (FaultInjection `latent`). */
  latentFault: boolean;
}

export interface SimNode {
  name: string;
  leaf: string;
  spine: string;
  cpuMilli: number;
  memoryMiB: number;
  persona: Persona;
  labels: Record<string, string>;
  gpus: SimGpu[];
  unschedulable: boolean;
  down: boolean;
  nicDown: boolean;
  switchingPersona: boolean;
  /** Power as its BMC reports it. */
  power: NodePowerState;
  /** Fault injection (`power-up-fail`): the next power-on does not bring the node up. */
  powerUpFails: boolean;
}

export class SimCluster {
  private readonly nodes = new Map<string, SimNode>();

  constructor(topology: Topology) {
    for (const { node, leaf, spine } of topologyNodes(topology)) {
      this.nodes.set(node.name, {
        name: node.name,
        leaf,
        spine,
        cpuMilli: node.cpuMilli,
        memoryMiB: node.memoryMiB,
        persona: node.persona ?? 'container',
        labels: { ...node.labels },
        gpus: node.gpus.map((gpu, index) => ({
          index,
          model: gpu.model,
          memoryMiB: gpu.memoryMiB,
          nvlinkDomain: gpu.nvlinkDomain,
          migCapable: isMigCapable(gpu.model),
          migLayout: [...(gpu.migLayout ?? [])],
          healthy: true,
          latentFault: false,
        })),
        unschedulable: false,
        down: false,
        nicDown: false,
        switchingPersona: false,
        power: 'on',
        powerUpFails: false,
      });
    }
  }

  all(): SimNode[] {
    return [...this.nodes.values()];
  }

  node(name: string): SimNode {
    const node = this.nodes.get(name);
    if (!node) throw new Error(`unknown node ${name}`);
    return node;
  }

  /** The node, refusing one that is down or not powered on. */
  upNode(name: string): SimNode {
    const node = this.node(name);
    if (node.down) throw new Error(`node ${name} is down`);
    if (node.power !== 'on') throw new Error(`node ${name} is ${node.power === 'off' ? 'powered off' : node.power}`);
    return node;
  }

  gpu(node: SimNode, index: number): SimGpu {
    const gpu = node.gpus[index];
    if (!gpu) throw new Error(`node ${node.name} has no GPU ${index} (it has ${node.gpus.length})`);
    return gpu;
  }

  inventory(): Inventory {
    return { nodes: this.all().map(inventoryNode) };
  }

  /** One node's inventory, as inventory() lists it; undefined for an unknown node. */
  inventoryOf(name: string): InventoryNode | undefined {
    const node = this.nodes.get(name);
    return node && inventoryNode(node);
  }
}

function inventoryNode(node: SimNode): InventoryNode {
  return {
    name: node.name,
    leaf: node.leaf,
    spine: node.spine,
    cpuMilli: node.cpuMilli,
    memoryMiB: node.memoryMiB,
    persona: node.persona,
    labels: { ...discoveryLabels(node), ...node.labels },
    gpus: node.gpus.map((gpu) => ({
      index: gpu.index,
      model: gpu.model,
      memoryMiB: gpu.memoryMiB,
      nvlinkDomain: gpu.nvlinkDomain,
      migCapable: gpu.migCapable,
      migLayout: gpu.migLayout.map((slice) => ({ ...slice })),
      health: gpu.healthy ? 'healthy' : 'unhealthy',
    })),
    unschedulable: node.unschedulable,
    ready: !node.down && node.power === 'on',
    networkUp: !node.nicDown,
    powerState: node.power,
  };
}

/** The labels GPU feature discovery and Topograph would put on such a node. */
function discoveryLabels(node: SimNode): Record<string, string> {
  const labels: Record<string, string> = {
    [TOPOLOGY_LABELS.leaf]: node.leaf,
    [TOPOLOGY_LABELS.spine]: node.spine,
    [GPU_LABELS.count]: String(node.gpus.length),
  };
  if (node.gpus.length > 0) labels[GPU_LABELS.product] = node.gpus[0].model;
  return labels;
}
