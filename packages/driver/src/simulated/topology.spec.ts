import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoTopology, generateTopology } from './generate-topology';
import { parseTopology, topologyCounts, topologyNodes, TopologyError } from './topology';
import { formatTopologyJson, loadTopologyFile } from './topology-file';

const DEMO_FILE = join(__dirname, '../../topologies/demo.json');

describe('demoTopology', () => {
  const demo = demoTopology();
  const nodes = topologyNodes(demo);

  it('has 2 spines x 4 leaves x 4 nodes x 8 GPUs', () => {
    expect(topologyCounts(demo)).toEqual({ spines: 2, leaves: 8, nodes: 32, gpus: 256 });
  });

  it('puts H100-80GB nodes under spine-0 and A100-80GB nodes under spine-1', () => {
    const modelsBySpine = (spine: string) => new Set(nodes.filter((n) => n.spine === spine).flatMap((n) => n.node.gpus.map((g) => g.model)));
    expect([...modelsBySpine('spine-0')]).toEqual(['H100-80GB']);
    expect([...modelsBySpine('spine-1')]).toEqual(['A100-80GB']);
  });

  it('names nodes <family>-s<spine>-l<leaf>-n<node> under leaves leaf-s<spine>-l<leaf>', () => {
    const node = nodes.find((n) => n.node.name === 'h100-s0-l1-n2')!;
    expect(node).toMatchObject({ leaf: 'leaf-s0-l1', spine: 'spine-0' });
    expect(nodes.map((n) => n.node.name)).toContain('a100-s1-l3-n3');
    expect(new Set(nodes.map((n) => n.node.name)).size).toBe(32);
  });

  it('gives every node 128 cores, 1 TiB and one NVLink domain of 8 GPUs (HGX NVSwitch)', () => {
    for (const { node } of nodes) {
      expect(node).toMatchObject({ cpuMilli: 128_000, memoryMiB: 1_048_576, persona: 'container' });
      expect(node.gpus.map((g) => g.nvlinkDomain)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    }
  });

  it('is what topologies/demo.json holds, byte for byte (regenerate with `pnpm topology:demo`)', () => {
    const file = readFileSync(DEMO_FILE, 'utf8');
    expect(file).toBe(formatTopologyJson(demo));
    expect(loadTopologyFile(DEMO_FILE)).toEqual(demo);
  });
});

describe('generateTopology', () => {
  it('produces a 1,000-node cluster with unique names', () => {
    const big = generateTopology({ spines: 5, leavesPerSpine: 10, nodesPerLeaf: 20, gpusPerNode: 8, models: ['H100-80GB', 'A100-80GB', 'H200-141GB'] });
    expect(topologyCounts(big)).toEqual({ spines: 5, leaves: 50, nodes: 1000, gpus: 8000 });
    expect(() => parseTopology(JSON.parse(formatTopologyJson(big)))).not.toThrow();
  });

  it('splits a node into NVLink domains of nvlinkDomainSize GPUs', () => {
    const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 8, models: ['A100-40GB'], nvlinkDomainSize: 4 });
    expect(topology.spines[0].leaves[0].nodes[0].gpus.map((g) => g.nvlinkDomain)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
  });

  it('needs the framebuffer size of a model it does not know', () => {
    const unknown = { spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 1, models: ['L40S'] };
    expect(() => generateTopology(unknown)).toThrow(/unknown GPU model L40S; pass gpuMemoryMiB/);
    expect(generateTopology({ ...unknown, gpuMemoryMiB: 46068 }).spines[0].leaves[0].nodes[0].gpus[0].memoryMiB).toBe(46068);
  });
});

describe('parseTopology', () => {
  const validNode = () => ({ name: 'n0', cpuMilli: 1000, memoryMiB: 1024, gpus: [{ model: 'H100-80GB', nvlinkDomain: 0 }] });
  const withNodes = (...nodes: unknown[]) => ({ spines: [{ name: 's0', leaves: [{ name: 'l0', nodes }] }] });

  it('fills in the framebuffer of a known GPU model and the container persona', () => {
    const topology = parseTopology(withNodes(validNode()));
    expect(topology.spines[0].leaves[0].nodes[0]).toEqual({ ...validNode(), gpus: [{ model: 'H100-80GB', memoryMiB: 81559, nvlinkDomain: 0 }] });
  });

  it.each([
    {
      name: 'a missing GPU model',
      raw: withNodes({ ...validNode(), gpus: [{ nvlinkDomain: 0 }] }),
      wantError: 'spines[0].leaves[0].nodes[0].gpus[0].model: expected a non-empty string',
    },
    { name: 'a duplicate node name', raw: withNodes(validNode(), validNode()), wantError: 'spines[0].leaves[0].nodes[1].name: "n0" is used twice' },
    {
      name: 'an unknown persona',
      raw: withNodes({ ...validNode(), persona: 'bare-metal' }),
      wantError: 'spines[0].leaves[0].nodes[0].persona: expected one of container, vm-passthrough, inference',
    },
    {
      name: 'a negative CPU',
      raw: withNodes({ ...validNode(), cpuMilli: -1 }),
      wantError: 'spines[0].leaves[0].nodes[0].cpuMilli: expected a non-negative integer',
    },
    {
      name: 'an invalid initial MIG layout',
      raw: withNodes({ ...validNode(), gpus: [{ model: 'H100-80GB', nvlinkDomain: 0, migLayout: [{ profile: '3g.40gb', start: 1 }] }] }),
      wantError: 'spines[0].leaves[0].nodes[0].gpus[0].migLayout: [legal-start]',
    },
    { name: 'no spines', raw: { spines: [] }, wantError: 'spines: a topology needs at least one spine' },
  ])('refuses $name with the path of the problem', ({ raw, wantError }) => {
    expect(() => parseTopology(raw)).toThrow(TopologyError);
    expect(() => parseTopology(raw)).toThrow(wantError);
  });
});

describe('loadTopologyFile', () => {
  it('names the file it cannot read', () => {
    expect(() => loadTopologyFile('/nonexistent/cluster.json')).toThrow(/cannot read topology file \/nonexistent\/cluster.json/);
  });
});
