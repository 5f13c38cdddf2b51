/**
 * The simulated cluster's topology: spines -> leaf switches -> nodes -> GPUs.
 *
 * File format (JSON; `topologies/demo.json` is an example):
 *
 *   {
 *     "name": "demo",                                   optional label
 *     "spines": [{
 *       "name": "spine-0",                              unique
 *       "leaves": [{
 *         "name": "leaf-s0-l0",                         unique
 *         "nodes": [{
 *           "name": "h100-s0-l0-n0",                    unique, stable: Gantry addresses nodes by name
 *           "cpuMilli": 128000,                         allocatable CPU in millicores
 *           "memoryMiB": 1048576,                       allocatable memory
 *           "persona": "container",                     optional: container (default) | vm-passthrough | inference
 *           "labels": { "example.com/rack": "r1" },     optional, reported by discover()
 *           "gpus": [                                   GPU index = position in this array
 *             { "model": "H100-80GB",                   H100-80GB | H200-141GB | A100-80GB | A100-40GB | other
 *               "memoryMiB": 81559,                     optional for the four known models
 *               "nvlinkDomain": 0,                      GPUs sharing a number share an NVLink/NVSwitch domain
 *               "migLayout": [{ "profile": "3g.40gb", "start": 4 }] }   optional, validated; empty = MIG off
 *           ]
 *         }]
 *       }]
 *     }]
 *   }
 */
import { gpuModelSpec, PERSONAS } from '@gantry/contracts';
import { migLayoutViolations } from '../shared/mig-layout';
import type { MigSliceSpec, Persona } from '../types';

export interface TopologyGpu {
  model: string;
  memoryMiB: number;
  nvlinkDomain: number;
  migLayout?: MigSliceSpec[];
}

export interface TopologyNode {
  name: string;
  cpuMilli: number;
  memoryMiB: number;
  persona?: Persona;
  labels?: Record<string, string>;
  gpus: TopologyGpu[];
}

export interface TopologyLeaf {
  name: string;
  nodes: TopologyNode[];
}

export interface TopologySpine {
  name: string;
  leaves: TopologyLeaf[];
}

export interface Topology {
  name?: string;
  spines: TopologySpine[];
}

export class TopologyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TopologyError';
  }
}

/** Checks an untrusted topology (a parsed JSON file) and returns it typed; errors name the path. */
export function parseTopology(raw: unknown): Topology {
  const root = record(raw, 'topology');
  const names = new Set<string>();
  const unique = (name: string, path: string) => {
    if (names.has(name)) throw new TopologyError(`${path}.name: "${name}" is used twice`);
    names.add(name);
    return name;
  };
  const spines = list(root.spines, 'spines').map((s, si) => {
    const sp = `spines[${si}]`;
    const spine = record(s, sp);
    return {
      name: unique(text(spine.name, `${sp}.name`), sp),
      leaves: list(spine.leaves, `${sp}.leaves`).map((l, li) => {
        const lp = `${sp}.leaves[${li}]`;
        const leaf = record(l, lp);
        return {
          name: unique(text(leaf.name, `${lp}.name`), lp),
          nodes: list(leaf.nodes, `${lp}.nodes`).map((n, ni) => {
            const np = `${lp}.nodes[${ni}]`;
            const node = parseNode(n, np);
            unique(node.name, np);
            return node;
          }),
        };
      }),
    };
  });
  if (spines.length === 0) throw new TopologyError('spines: a topology needs at least one spine');
  return root.name === undefined ? { spines } : { name: text(root.name, 'name'), spines };
}

/** Every node of a topology with the leaf and spine it hangs from. */
export function topologyNodes(topology: Topology): { node: TopologyNode; leaf: string; spine: string }[] {
  return topology.spines.flatMap((spine) => spine.leaves.flatMap((leaf) => leaf.nodes.map((node) => ({ node, leaf: leaf.name, spine: spine.name }))));
}

export function topologyCounts(topology: Topology): { spines: number; leaves: number; nodes: number; gpus: number } {
  const nodes = topologyNodes(topology).map((n) => n.node);
  return {
    spines: topology.spines.length,
    leaves: topology.spines.reduce((sum, s) => sum + s.leaves.length, 0),
    nodes: nodes.length,
    gpus: nodes.reduce((sum, n) => sum + n.gpus.length, 0),
  };
}

function parseNode(raw: unknown, path: string): TopologyNode {
  const node = record(raw, path);
  const parsed: TopologyNode = {
    name: text(node.name, `${path}.name`),
    cpuMilli: count(node.cpuMilli, `${path}.cpuMilli`),
    memoryMiB: count(node.memoryMiB, `${path}.memoryMiB`),
    gpus: list(node.gpus, `${path}.gpus`).map((g, gi) => parseGpu(g, `${path}.gpus[${gi}]`)),
  };
  if (node.persona !== undefined) {
    if (!PERSONAS.includes(node.persona as Persona)) {
      throw new TopologyError(`${path}.persona: expected one of ${PERSONAS.join(', ')}`);
    }
    parsed.persona = node.persona as Persona;
  }
  if (node.labels !== undefined) {
    const labels = record(node.labels, `${path}.labels`);
    parsed.labels = Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, text(v, `${path}.labels.${k}`)]));
  }
  return parsed;
}

function parseGpu(raw: unknown, path: string): TopologyGpu {
  const gpu = record(raw, path);
  const model = text(gpu.model, `${path}.model`);
  const knownMemory = gpuModelSpec(model)?.memoryMiB;
  const memoryMiB = gpu.memoryMiB === undefined && knownMemory !== undefined ? knownMemory : count(gpu.memoryMiB, `${path}.memoryMiB`);
  const parsed: TopologyGpu = { model, memoryMiB, nvlinkDomain: count(gpu.nvlinkDomain, `${path}.nvlinkDomain`) };
  if (gpu.migLayout !== undefined) {
    const layout = list(gpu.migLayout, `${path}.migLayout`).map((s, i) => {
      const slicePath = `${path}.migLayout[${i}]`;
      const slice = record(s, slicePath);
      return { profile: text(slice.profile, `${slicePath}.profile`), start: count(slice.start, `${slicePath}.start`) };
    });
    const violations = migLayoutViolations(model, layout);
    if (violations.length > 0) {
      throw new TopologyError(`${path}.migLayout: ${violations.map((v) => `[${v.rule}] ${v.message}`).join('; ')}`);
    }
    parsed.migLayout = layout;
  }
  return parsed;
}

function record(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TopologyError(`${path}: expected an object`);
  }
  return value as Record<string, unknown>;
}

function list(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new TopologyError(`${path}: expected an array`);
  return value;
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TopologyError(`${path}: expected a non-empty string`);
  return value;
}

function count(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new TopologyError(`${path}: expected a non-negative integer`);
  }
  return value;
}
