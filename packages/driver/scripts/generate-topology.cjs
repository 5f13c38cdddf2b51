#!/usr/bin/env node
// Writes a topology file from the built package (run `pnpm build` first).
//   node scripts/generate-topology.cjs demo > topologies/demo.json
//   node scripts/generate-topology.cjs demo-accelerators > topologies/demo-accelerators.json
//   node scripts/generate-topology.cjs --spines 5 --leaves-per-spine 10 --nodes-per-leaf 20 \
//     --gpus-per-node 8 --models H100-80GB,A100-80GB,H200-141GB > /tmp/cluster-1000.json
const { acceleratorsDemoTopology, demoTopology, generateTopology, formatTopologyJson } = require('../dist');

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    options[key] = argv[i + 1];
  }
  return options;
}

const argv = process.argv.slice(2);
if (argv[0] === 'demo') {
  process.stdout.write(formatTopologyJson(demoTopology()));
} else if (argv[0] === 'demo-accelerators') {
  process.stdout.write(formatTopologyJson(acceleratorsDemoTopology()));
} else {
  const o = parseArgs(argv);
  const int = (name, fallback) => Number.parseInt(o[name] ?? String(fallback), 10);
  const topology = generateTopology({
    spines: int('spines', 5),
    leavesPerSpine: int('leavesPerSpine', 10),
    nodesPerLeaf: int('nodesPerLeaf', 20),
    gpusPerNode: int('gpusPerNode', 8),
    models: (o.models ?? 'H100-80GB,A100-80GB').split(','),
    nvlinkDomainSize: o.nvlinkDomainSize === undefined ? undefined : int('nvlinkDomainSize', 8),
    name: o.name,
  });
  process.stdout.write(formatTopologyJson(topology));
}
