import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { partitionModeLayout, partitionModeLayoutOf } from '@gantry/contracts';
import { MigLayoutError } from '../shared/mig-layout';
import { acceleratorsDemoTopology, generateTopology } from './generate-topology';
import { SimulatedDriver } from './simulated-driver';
import { topologyCounts, topologyNodes } from './topology';
import { formatTopologyJson } from './topology-file';

// An AMD MI300X in the simulated cluster: the driver applies and refuses its layouts from the
// catalog's data (a partition mode at a time), like a MIG layout on an NVIDIA GPU.
const MI = 'MI300X-192GB';
const NODE = 'mi300x-s0-l0-n0';
const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 2, models: [MI] });

let drivers: SimulatedDriver[] = [];
beforeEach(() => {
  jest.useFakeTimers();
  drivers = [];
});
afterEach(async () => {
  await Promise.all(drivers.map((d) => d.close()));
  jest.useRealTimers();
});
function driver(): SimulatedDriver {
  const d = new SimulatedDriver({ topology, delays: { migApplySeconds: 0, startSeconds: 0 } });
  drivers.push(d);
  return d;
}
async function apply(d: SimulatedDriver, gpuIndex: number, layout: { profile: string; start: number }[]) {
  const applied = d.applyMigLayout(NODE, gpuIndex, layout);
  await jest.advanceTimersByTimeAsync(0);
  await applied;
}
const layoutOf = async (d: SimulatedDriver, index: number) => (await d.discover()).nodes.find((n) => n.name === NODE)!.gpus[index]!.migLayout;

describe('SimulatedDriver: MI300X partition modes', () => {
  it('repartitions SPX -> CPX/NPS4 -> DPX/NPS1 -> SPX', async () => {
    const d = driver();
    const cpx = partitionModeLayout(MI, 'CPX', 'NPS4');
    if (!cpx.ok) throw new Error(cpx.message);
    await apply(d, 0, cpx.layout);
    expect((await layoutOf(d, 0)).map((s) => `${s.profile}@${s.start}`)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `cpx_nps4@${i}`));
    await apply(d, 0, partitionModeLayoutOf(MI, 'dpx_nps1')!);
    expect(await layoutOf(d, 0)).toEqual([
      { profile: 'dpx_nps1', start: 0 },
      { profile: 'dpx_nps1', start: 4 },
    ]);
    await apply(d, 0, []);
    expect(await layoutOf(d, 0)).toEqual([]);
    expect(await layoutOf(d, 1)).toEqual([]);
  });

  it('refuses half a mode and two modes at once, naming the rule', async () => {
    const d = driver();
    const half = d.applyMigLayout(NODE, 0, partitionModeLayoutOf(MI, 'qpx_nps1')!.slice(0, 2));
    await expect(half).rejects.toBeInstanceOf(MigLayoutError);
    await expect(half).rejects.toMatchObject({ rule: 'one-mode' });
    const mixed = [
      { profile: 'dpx_nps1', start: 0 },
      { profile: 'qpx_nps1', start: 4 },
      { profile: 'qpx_nps1', start: 6 },
    ];
    await expect(d.applyMigLayout(NODE, 0, mixed)).rejects.toThrow(/one partition mode at a time/);
    await expect(d.applyMigLayout(NODE, 0, [{ profile: '3g.40gb', start: 0 }])).rejects.toMatchObject({ rule: 'known-profile' });
  });

  it('runs a job on one CPX partition and will not repartition under it', async () => {
    const d = driver();
    await apply(d, 0, partitionModeLayoutOf(MI, 'cpx_nps4')!);
    await d.start({ jobId: 'small', kind: 'notebook', replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0, migProfile: 'cpx_nps4', migStart: 5 }] }] });
    await jest.advanceTimersByTimeAsync(1);
    await expect(d.applyMigLayout(NODE, 0, [])).rejects.toThrow(/in use by job small/);
    const sample = (await d.metrics()).find((s) => s.nodeName === NODE && s.gpuIndex === 0)!;
    // one XCD of eight
    expect(sample.smPct).toBeGreaterThan(0);
    expect(sample.smPct).toBeLessThanOrEqual(100 / 8);
  });
});

describe('acceleratorsDemoTopology', () => {
  it('is the demo cluster plus an MI300X leaf (half of one node in CPX/NPS4) and a B200 leaf', () => {
    const t = acceleratorsDemoTopology();
    expect(topologyCounts(t)).toEqual({ spines: 3, leaves: 10, nodes: 36, gpus: 288 });
    const spine2 = topologyNodes(t).filter((n) => n.spine === 'spine-2');
    expect(spine2.map((n) => `${n.leaf} ${n.node.name} ${n.node.gpus[0]!.model}`)).toEqual([
      'leaf-s2-l0 mi300x-s2-l0-n0 MI300X-192GB',
      'leaf-s2-l0 mi300x-s2-l0-n1 MI300X-192GB',
      'leaf-s2-l1 b200-s2-l1-n0 B200-180GB',
      'leaf-s2-l1 b200-s2-l1-n1 B200-180GB',
    ]);
    expect(spine2[0]!.node.gpus.map((g) => g.migLayout?.length ?? 0)).toEqual([8, 8, 8, 8, 0, 0, 0, 0]);
  });

  it('is what topologies/demo-accelerators.json holds (regenerate with `pnpm topology:demo`)', () => {
    expect(readFileSync(join(__dirname, '../../topologies/demo-accelerators.json'), 'utf8')).toBe(formatTopologyJson(acceleratorsDemoTopology()));
  });
});
