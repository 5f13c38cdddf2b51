/** Reading and writing topology files (format: see topology.ts). */
import { readFileSync } from 'node:fs';
import { parseTopology, TopologyError, type Topology } from './topology';

export function loadTopologyFile(path: string): Topology {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new TopologyError(`cannot read topology file ${path}: ${(err as Error).message}`);
  }
  try {
    return parseTopology(raw);
  } catch (err) {
    throw new TopologyError(`${path}: ${(err as Error).message}`);
  }
}

/** Pretty JSON with one GPU per line, so a 256-GPU file stays readable and diffable. */
export function formatTopologyJson(topology: Topology): string {
  const gpuLines: string[] = [];
  const withTokens = {
    ...topology,
    spines: topology.spines.map((spine) => ({
      ...spine,
      leaves: spine.leaves.map((leaf) => ({
        ...leaf,
        nodes: leaf.nodes.map((node) => ({
          ...node,
          gpus: node.gpus.map((gpu) => `\u0000gpu${gpuLines.push(JSON.stringify(gpu)) - 1}`),
        })),
      })),
    })),
  };
  return `${JSON.stringify(withTokens, null, 2).replace(/"\\u0000gpu(\d+)"/g, (_, i: string) => gpuLines[Number(i)])}\n`;
}
