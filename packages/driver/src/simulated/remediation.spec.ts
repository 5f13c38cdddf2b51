import type { DriverEvent } from '../types';
import { generateTopology } from './generate-topology';
import { SimulatedDriver } from './simulated-driver';

// Remediation of the failover loop: GPU reset and node reboot (simulated delays at zero).
const NODE = 'a100-s0-l0-n0';
const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 2, models: ['A100-80GB'] });
const zero = { startSeconds: 0, gpuResetSeconds: 0, rebootSeconds: 0, migApplySeconds: 0 };

let driver: SimulatedDriver;
let events: DriverEvent[];
beforeEach(() => {
  driver = new SimulatedDriver({ topology, speed: 1000, delays: zero });
  events = [];
  driver.onEvent((e) => events.push(e));
});
afterEach(() => driver.close());

const gpu = async (i: number) => (await driver.discover()).nodes[0]!.gpus[i]!;

describe('simulated remediation', () => {
  it('a GPU reset brings an unhealthy GPU back; it is refused while a job runs on the GPU', async () => {
    await driver.start({ jobId: 'j', kind: 'training', replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 1 }] }] });
    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'xid', xid: 63 }); // unhealthy, the job keeps running
    expect((await gpu(1)).health).toBe('unhealthy');
    await expect(driver.resetGpu(NODE, 1)).rejects.toThrow(/still runs jobs j/);
    await driver.stop('j');
    await driver.resetGpu(NODE, 1);
    expect((await gpu(1)).health).toBe('healthy');
  });

  it('a reboot brings a down node back with healthy GPUs and emits node-up; the MIG layout is kept', async () => {
    await driver.applyMigLayout(NODE, 0, [{ profile: '3g.40gb', start: 4 }]);
    await driver.injectFault({ nodeName: NODE, kind: 'node-down' });
    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'xid', xid: 79 });
    expect((await driver.discover()).nodes[0]!.ready).toBe(false);
    await driver.rebootNode(NODE);
    const node = (await driver.discover()).nodes[0]!;
    expect(node.ready).toBe(true);
    expect(node.gpus.every((g) => g.health === 'healthy')).toBe(true);
    expect(node.gpus[0]!.migLayout).toEqual([{ profile: '3g.40gb', start: 4 }]);
    expect(events.map((e) => e.type)).toContain('node-up');
  });

  it('reports why an exited job ended in its status', async () => {
    await driver.start({ jobId: 'k', kind: 'training', replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0 }] }] });
    await driver.injectFault({ nodeName: NODE, kind: 'node-down' });
    expect(await driver.status('k')).toMatchObject({ state: 'exited', exitCode: 137, reason: 'node-lost' });
  });
});
