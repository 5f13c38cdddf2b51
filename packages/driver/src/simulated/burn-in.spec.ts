import type { DriverEvent, WorkloadStatus } from '../types';
import { parseBurnInFindings } from '../shared/burn-in';
import { generateTopology } from './generate-topology';
import { SimulatedDriver } from './simulated-driver';

// Burn-in and latent faults: a defect idle checks miss shows under load (simulated delays short, speed 1000).
const NODE = 'a100-s0-l0-n0';
const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 2, models: ['A100-80GB'] });

let driver: SimulatedDriver;
let events: DriverEvent[];
beforeEach(() => {
  driver = new SimulatedDriver({ topology, speed: 1000, delays: { startSeconds: 0, gpuResetSeconds: 0, rebootSeconds: 0, latentFaultSeconds: 20 } });
  events = [];
  driver.onEvent((e) => events.push(e));
});
afterEach(() => driver.close());

const burnIn = (jobId: string, gpus: number[]) =>
  driver.start({ jobId, kind: 'burn-in', durationSeconds: 100, replicas: [{ replica: 0, nodeName: NODE, gpus: gpus.map((index) => ({ index })) }] });

async function ended(jobId: string): Promise<WorkloadStatus> {
  for (let i = 0; i < 500; i++) {
    const s = await driver.status(jobId);
    if (s.state === 'exited') return s;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${jobId} did not end`);
}

describe('simulated burn-in', () => {
  it('passes on sound GPUs and reports one finding per GPU', async () => {
    await burnIn('b1', [0, 1]);
    const s = await ended('b1');
    expect(s).toMatchObject({ exitCode: 0, reason: 'completed', progressSeconds: 100 });
    expect(parseBurnInFindings(s.message)).toEqual([
      { gpuIndex: 0, result: 'pass', detail: 'all tests passed' },
      { gpuIndex: 1, result: 'pass', detail: 'all tests passed' },
    ]);
  });

  it('a latent fault looks healthy at idle, fails the burn-in part way through, and survives a reset and a reboot', async () => {
    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'latent' });
    expect((await driver.discover()).nodes[0]!.gpus[1]!.health).toBe('healthy');
    await burnIn('b2', [0, 1]);
    const s = await ended('b2');
    expect(s).toMatchObject({ exitCode: 1, reason: 'failed' });
    expect(s.progressSeconds).toBeLessThan(100);
    const findings = parseBurnInFindings(s.message);
    expect(findings.map((f) => [f.gpuIndex, f.result])).toEqual([
      [0, 'pass'],
      [1, 'fail'],
    ]);
    expect(findings[1]!.detail).toMatch(/under load/);

    await driver.resetGpu(NODE, 1);
    await driver.rebootNode(NODE);
    await burnIn('b3', [1]);
    expect((await ended('b3')).exitCode).toBe(1);

    // a replaced part (recover) is sound
    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'recover' });
    await burnIn('b4', [1]);
    expect((await ended('b4')).exitCode).toBe(0);
  });

  it('ordinary work on a GPU with a latent fault ends with Xid 79 after latentFaultSeconds', async () => {
    await driver.injectFault({ nodeName: NODE, gpuIndex: 0, kind: 'latent' });
    await driver.start({ jobId: 'j', kind: 'training', replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0 }] }] });
    const s = await ended('j');
    expect(s).toMatchObject({ reason: 'gpu-fault' });
    expect(events).toContainEqual(expect.objectContaining({ type: 'xid', nodeName: NODE, gpuIndex: 0, xid: 79 }));
    expect((await driver.discover()).nodes[0]!.gpus[0]!.health).toBe('unhealthy');
  });

  it('refuses a latent fault without a GPU index', async () => {
    await expect(driver.injectFault({ nodeName: NODE, kind: 'latent' })).rejects.toThrow(/gpuIndex/);
  });
});
