/**
 * Generated topologies: a regular spine/leaf tree of identical 8-GPU-style nodes, for the demo
 * cluster and for scale tests (1,000 nodes and more).
 */
import { gpuModelSpec, partitionModeLayoutOf } from '@gantry/contracts';
import type { Topology, TopologyGpu } from './topology';

export interface GenerateTopologyOptions {
  spines: number;
  leavesPerSpine: number;
  nodesPerLeaf: number;
  gpusPerNode: number;
  /** GPU model per spine, round robin: spine i gets models[i % models.length]. */
  models: string[];
  /**
   * GPUs per NVLink domain. Default: all GPUs of the node in one domain, as on HGX A100/H100/H200
   * boards where NVSwitch connects all 8 GPUs. Use 2 for PCIe cards joined by NVLink bridges.
   */
  nvlinkDomainSize?: number;
  /** Per-node GPU framebuffer for models missing from the built-in table. */
  gpuMemoryMiB?: number;
  cpuMilli?: number;
  memoryMiB?: number;
  name?: string;
}

/** 128 cores and 1 TiB per node, as on a DGX/HGX-class server. */
export const DEFAULT_NODE_CPU_MILLI = 128_000;
export const DEFAULT_NODE_MEMORY_MIB = 1_048_576;

export function generateTopology(options: GenerateTopologyOptions): Topology {
  const { spines, leavesPerSpine, nodesPerLeaf, gpusPerNode, models } = options;
  if (models.length === 0) throw new Error('generateTopology: models must name at least one GPU model');
  const domainSize = options.nvlinkDomainSize ?? gpusPerNode;
  if (domainSize < 1) throw new Error('generateTopology: nvlinkDomainSize must be at least 1');
  return {
    name: options.name ?? `generated-${spines}x${leavesPerSpine}x${nodesPerLeaf}x${gpusPerNode}`,
    spines: range(spines).map((s) => {
      const model = models[s % models.length];
      const gpus = range(gpusPerNode).map((g) => gpuOf(model, Math.floor(g / domainSize), options.gpuMemoryMiB));
      return {
        name: `spine-${s}`,
        leaves: range(leavesPerSpine).map((l) => ({
          name: `leaf-s${s}-l${l}`,
          nodes: range(nodesPerLeaf).map((n) => ({
            name: `${gpuFamily(model)}-s${s}-l${l}-n${n}`,
            cpuMilli: options.cpuMilli ?? DEFAULT_NODE_CPU_MILLI,
            memoryMiB: options.memoryMiB ?? DEFAULT_NODE_MEMORY_MIB,
            persona: 'container' as const,
            gpus: gpus.map((gpu) => ({ ...gpu })),
          })),
        })),
      };
    }),
  };
}

/**
 * The demo cluster: 2 spines x 4 leaf switches x 4 nodes x 8 GPUs = 32 nodes, 256 GPUs.
 * spine-0 holds H100-80GB nodes, spine-1 A100-80GB nodes; one NVLink domain of 8 per node (HGX).
 */
export function demoTopology(): Topology {
  return generateTopology({
    name: 'demo',
    spines: 2,
    leavesPerSpine: 4,
    nodesPerLeaf: 4,
    gpusPerNode: 8,
    models: ['H100-80GB', 'A100-80GB'],
  });
}

/**
 * The demo cluster plus a third spine of newer accelerators, the cluster `npm run dev` starts
 * (topologies/demo-accelerators.json): spine-2 holds leaf-s2-l0 with 2 AMD MI300X-192GB nodes
 * (the first one's GPUs 0-3 in CPX/NPS4, 8 partitions each; the rest in SPX, whole) and
 * leaf-s2-l1 with 2 B200-180GB nodes. 36 nodes, 288 GPUs.
 */
export function acceleratorsDemoTopology(): Topology {
  const demo = demoTopology();
  const extra = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 2, gpusPerNode: 8, models: ['MI300X-192GB'] }).spines[0];
  const b200 = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 2, gpusPerNode: 8, models: ['B200-180GB'] }).spines[0].leaves[0];
  const cpx = partitionModeLayoutOf('MI300X-192GB', 'cpx_nps4')!;
  const rename = (name: string) => name.replace('-s0-', '-s2-');
  const [mi300x] = extra.leaves;
  const spine = {
    name: 'spine-2',
    leaves: [
      {
        name: 'leaf-s2-l0',
        nodes: mi300x.nodes.map((n, i) => ({
          ...n,
          name: rename(n.name),
          gpus: n.gpus.map((g, index) => (i === 0 && index < 4 ? { ...g, migLayout: cpx.map((e) => ({ ...e })) } : g)),
        })),
      },
      { name: 'leaf-s2-l1', nodes: b200.nodes.map((n) => ({ ...n, name: rename(n.name).replace('-l0-', '-l1-') })) },
    ],
  };
  return { ...demo, name: 'demo-accelerators', spines: [...demo.spines, spine] };
}

function gpuOf(model: string, nvlinkDomain: number, fallbackMemoryMiB: number | undefined): TopologyGpu {
  const memoryMiB = gpuModelSpec(model)?.memoryMiB ?? fallbackMemoryMiB;
  if (memoryMiB === undefined) {
    throw new Error(`generateTopology: unknown GPU model ${model}; pass gpuMemoryMiB`);
  }
  return { model, memoryMiB, nvlinkDomain };
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** `H100-80GB` -> `h100`: the family prefix of node names. */
function gpuFamily(model: string): string {
  return model.split('-')[0].toLowerCase();
}
