import type { DriverEvent, StartRequest, WorkloadStatus } from '../types';
import { generateTopology } from './generate-topology';
import { MigLayoutError } from '../shared/mig-layout';
import { SimulatedDriverClosedError } from './sim-timers';
import { SimulatedDriver, type SimulatedDriverOptions } from './simulated-driver';
import { SIM_EXIT_CODES } from './workloads';

// One leaf, two A100-80GB nodes of 2 GPUs: a100-s0-l0-n0 and a100-s0-l0-n1.
const NODE = 'a100-s0-l0-n0';
const OTHER_NODE = 'a100-s0-l0-n1';
const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 2, gpusPerNode: 2, models: ['A100-80GB'] });

function driverWith(options: Omit<SimulatedDriverOptions, 'topology'> = {}) {
  const driver = new SimulatedDriver({ topology, ...options });
  const events: DriverEvent[] = [];
  driver.onEvent((e) => events.push(e));
  return { driver, events };
}

function wholeGpuJob(jobId: string, extra: Partial<StartRequest> = {}, nodeName = NODE, gpuIndex = 0): StartRequest {
  return { jobId, kind: 'training', replicas: [{ replica: 0, nodeName, gpus: [{ index: gpuIndex }] }], ...extra };
}

async function gpuOf(driver: SimulatedDriver, nodeName: string, index: number) {
  const inventory = await driver.discover();
  return inventory.nodes.find((n) => n.name === nodeName)!.gpus[index];
}

const exitsOf = (events: DriverEvent[]) => events.filter((e) => e.type === 'job-exited');

let drivers: SimulatedDriver[] = [];
beforeEach(() => {
  jest.useFakeTimers();
  drivers = [];
});
afterEach(async () => {
  await Promise.all(drivers.map((d) => d.close()));
  jest.useRealTimers();
});
function tracked(options: Omit<SimulatedDriverOptions, 'topology'> = {}) {
  const made = driverWith(options);
  drivers.push(made.driver);
  return made;
}

describe('SimulatedDriver MIG', () => {
  const balanced = [
    { profile: '3g.40gb', start: 4 },
    { profile: '2g.20gb', start: 2 },
    { profile: '1g.10gb', start: 0 },
    { profile: '1g.10gb', start: 1 },
  ];

  it('applies a valid layout only after migApplySeconds / speed', async () => {
    const { driver } = tracked({ speed: 2, delays: { migApplySeconds: 10 } });
    const applied = driver.applyMigLayout(NODE, 1, balanced);

    await jest.advanceTimersByTimeAsync(4_999);
    expect((await gpuOf(driver, NODE, 1)).migLayout).toEqual([]);

    await jest.advanceTimersByTimeAsync(1);
    await applied;
    const wantLayoutByStart = [
      { profile: '1g.10gb', start: 0 },
      { profile: '1g.10gb', start: 1 },
      { profile: '2g.20gb', start: 2 },
      { profile: '3g.40gb', start: 4 },
    ];
    expect((await gpuOf(driver, NODE, 1)).migLayout).toEqual(wantLayoutByStart);
  });

  it('refuses an invalid layout with an error naming the broken rule', async () => {
    const { driver } = tracked();
    const overlapping = [
      { profile: '4g.40gb', start: 0 },
      { profile: '2g.20gb', start: 2 },
    ];
    const refusal = driver.applyMigLayout(NODE, 0, overlapping);
    await expect(refusal).rejects.toBeInstanceOf(MigLayoutError);
    await expect(refusal).rejects.toMatchObject({ rule: 'no-overlap' });
  });

  it('shares an in-flight change with an identical retry and refuses a different one', async () => {
    const { driver } = tracked({ delays: { migApplySeconds: 5 } });
    const first = driver.applyMigLayout(NODE, 0, [{ profile: '7g.80gb', start: 0 }]);
    const retry = driver.applyMigLayout(NODE, 0, [{ profile: '7g.80gb', start: 0 }]);
    await expect(driver.applyMigLayout(NODE, 0, [{ profile: '3g.40gb', start: 0 }])).rejects.toThrow(/already in progress/);

    await jest.advanceTimersByTimeAsync(5_000);
    await expect(Promise.all([first, retry])).resolves.toEqual([undefined, undefined]);
  });

  it('refuses to destroy a MIG slice a job runs on but keeps the other slices changeable', async () => {
    const { driver } = tracked({ delays: { migApplySeconds: 0 } });
    const applied = driver.applyMigLayout(NODE, 0, balanced);
    await jest.advanceTimersByTimeAsync(0);
    await applied;
    await driver.start({
      jobId: 'notebook',
      kind: 'notebook',
      replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0, migProfile: '3g.40gb', migStart: 4 }] }],
    });

    await expect(driver.applyMigLayout(NODE, 0, [{ profile: '7g.80gb', start: 0 }])).rejects.toThrow(/in use by job notebook/);
    const keepsThe3g = driver.applyMigLayout(NODE, 0, [
      { profile: '4g.40gb', start: 0 },
      { profile: '3g.40gb', start: 4 },
    ]);
    await jest.advanceTimersByTimeAsync(0);
    await expect(keepsThe3g).resolves.toBeUndefined();
  });
});

describe('SimulatedDriver persona', () => {
  it('switches the persona after personaSwitchSeconds / speed', async () => {
    const { driver } = tracked({ speed: 10 });
    const switched = driver.setPersona(NODE, 'vm-passthrough');

    await jest.advanceTimersByTimeAsync(23_999);
    expect((await driver.discover()).nodes.find((n) => n.name === NODE)!.persona).toBe('container');

    await jest.advanceTimersByTimeAsync(1);
    await switched;
    expect((await driver.discover()).nodes.find((n) => n.name === NODE)!.persona).toBe('vm-passthrough');
  });

  it('refuses to switch a node that still runs jobs', async () => {
    const { driver } = tracked();
    await driver.start(wholeGpuJob('train'));
    await expect(driver.setPersona(NODE, 'inference')).rejects.toThrow(/still runs jobs train: drain it/);
  });
});

describe('SimulatedDriver workloads', () => {
  it('counts progress only after startSeconds and exits 0 when it reaches durationSeconds', async () => {
    const { driver, events } = tracked({ speed: 10, delays: { startSeconds: 1 } });
    await driver.start(wholeGpuJob('train', { durationSeconds: 100 }));

    await jest.advanceTimersByTimeAsync(100);
    expect(await driver.status('train')).toEqual({ state: 'running', progressSeconds: 0 });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(await driver.status('train')).toEqual({ state: 'running', progressSeconds: 50 });
    expect(exitsOf(events)).toEqual([]);

    await jest.advanceTimersByTimeAsync(5_000);
    const wantExit = { type: 'job-exited', jobId: 'train', exitCode: 0, reason: 'completed' };
    expect(exitsOf(events)).toEqual([expect.objectContaining(wantExit)]);
    expect(await driver.status('train')).toEqual({ state: 'exited', progressSeconds: 100, exitCode: 0, reason: 'completed' });
  });

  it('reports a job as starting until startSeconds have passed', async () => {
    const { driver } = tracked({ delays: { startSeconds: 3 } });
    await driver.start(wholeGpuJob('train'));
    expect(await driver.status('train')).toEqual({ state: 'running', progressSeconds: 0, starting: true });
  });

  it('adds modelLoadSeconds to the start of an inference workload (endpoint replica), not to other kinds', async () => {
    const { driver } = tracked({ delays: { startSeconds: 1, modelLoadSeconds: 3 } });
    await driver.start(wholeGpuJob('replica', { kind: 'inference' }));
    await driver.start(wholeGpuJob('train', {}, NODE, 1));
    await jest.advanceTimersByTimeAsync(1500);
    expect((await driver.status('train')).starting).toBeUndefined();
    expect((await driver.status('replica')).starting).toBe(true);
    await jest.advanceTimersByTimeAsync(2600);
    expect(await driver.status('replica')).toMatchObject({ state: 'running' });
    expect((await driver.status('replica')).starting).toBeUndefined();
  });

  it('starts a workload in cachedImageStartSeconds on a node that already pulled its image, in startSeconds elsewhere', async () => {
    const { driver } = tracked({ delays: { startSeconds: 1, cachedImageStartSeconds: 0.4, modelLoadSeconds: 3 } });
    await driver.start(wholeGpuJob('first', { kind: 'inference' }));
    await jest.advanceTimersByTimeAsync(4100);
    expect((await driver.status('first')).starting).toBeUndefined();
    await driver.stop('first');
    // same node, same image: no pull; another node: pulls; another image on the same node: pulls
    await driver.start(wholeGpuJob('again', { kind: 'inference' }));
    await driver.start(wholeGpuJob('other-node', { kind: 'inference' }, OTHER_NODE, 0));
    await driver.start(wholeGpuJob('other-image', { kind: 'inference', image: 'vllm/vllm-openai:v0.6.3' }, NODE, 1));
    await jest.advanceTimersByTimeAsync(3500);
    expect((await driver.status('again')).starting).toBeUndefined();
    expect((await driver.status('other-node')).starting).toBe(true);
    expect((await driver.status('other-image')).starting).toBe(true);
    await jest.advanceTimersByTimeAsync(600);
    expect((await driver.status('other-node')).starting).toBeUndefined();
    expect((await driver.status('other-image')).starting).toBeUndefined();
  });

  it('untilStarted wakes at the end of the container start and model load, not before; at once for a workload not starting', async () => {
    const { driver } = tracked({ delays: { startSeconds: 1, modelLoadSeconds: 3 } });
    await driver.start(wholeGpuJob('replica', { kind: 'inference' }));
    const woken: WorkloadStatus[] = [];
    void driver.untilStarted('replica', 60_000).then((s) => woken.push(s));
    await jest.advanceTimersByTimeAsync(3_999);
    expect(woken).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(woken).toEqual([{ state: 'running', progressSeconds: 0 }]);
    expect(await driver.untilStarted('replica', 60_000)).toEqual({ state: 'running', progressSeconds: 0 });
    expect(await driver.untilStarted('never-started', 60_000)).toEqual({ state: 'unknown', progressSeconds: 0 });
  });

  it('untilStarted wakes when a starting workload is stopped, and answers "still starting" after its timeout', async () => {
    const { driver } = tracked({ delays: { startSeconds: 1, modelLoadSeconds: 3 } });
    await driver.start(wholeGpuJob('stopped', { kind: 'inference' }));
    await driver.start(wholeGpuJob('slow', { kind: 'inference' }, NODE, 1));
    const stopped = driver.untilStarted('stopped', 60_000);
    const slow = driver.untilStarted('slow', 500);
    await driver.stop('stopped');
    expect(await stopped).toEqual({ state: 'unknown', progressSeconds: 0 });
    await jest.advanceTimersByTimeAsync(500);
    expect(await slow).toEqual({ state: 'running', progressSeconds: 0, starting: true });
  });

  it('never starts a cached image slower than a pull when only startSeconds is set (benchmarks at zero delay)', async () => {
    const { driver } = tracked({ delays: { startSeconds: 0 } });
    expect(driver.delays.cachedImageStartSeconds).toBe(0);
  });

  it('ignores a second start of a running job', async () => {
    const { driver } = tracked({ delays: { startSeconds: 0 } });
    await driver.start(wholeGpuJob('train', { durationSeconds: 100 }));
    await jest.advanceTimersByTimeAsync(10_000);

    await driver.start(wholeGpuJob('train', { durationSeconds: 100 }));
    expect((await driver.status('train')).progressSeconds).toBe(10);
  });

  it('suspends with the progress made and finishes only the remainder when started from it', async () => {
    const { driver, events } = tracked({ delays: { startSeconds: 0, suspendSeconds: 2 } });
    await driver.start(wholeGpuJob('train', { durationSeconds: 60 }));
    await jest.advanceTimersByTimeAsync(40_000);

    const suspending = driver.suspend('train');
    await jest.advanceTimersByTimeAsync(2_000);
    const { checkpoint, progressSeconds } = await suspending;
    expect(progressSeconds).toBe(40);
    expect(await driver.status('train')).toEqual({ state: 'unknown', progressSeconds: 0 });

    await driver.start(wholeGpuJob('train', { durationSeconds: 60, progressSeconds, checkpoint }));
    await jest.advanceTimersByTimeAsync(19_999);
    expect(exitsOf(events)).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(exitsOf(events)).toEqual([expect.objectContaining({ jobId: 'train', exitCode: 0 })]);
  });

  it('stops idempotently and without a job-exited event', async () => {
    const { driver, events } = tracked({ delays: { startSeconds: 0 } });
    await driver.start(wholeGpuJob('train', { durationSeconds: 5 }));
    await driver.stop('train');
    await driver.stop('train');
    await driver.stop('never-started');
    await jest.advanceTimersByTimeAsync(10_000);

    expect(exitsOf(events)).toEqual([]);
    expect(await driver.status('train')).toEqual({ state: 'unknown', progressSeconds: 0 });
  });

  it.each([
    {
      name: 'a whole GPU another job holds',
      replicaGpus: [{ index: 0 }],
      wantError: /GPU 0 of node a100-s0-l0-n0 is held by job first/,
    },
    {
      name: 'a MIG slice on a GPU without MIG',
      replicaGpus: [{ index: 1, migProfile: '1g.10gb' }],
      wantError: /has no MIG slice 1g\.10gb in its layout/,
    },
    {
      name: 'a GPU the node does not have',
      replicaGpus: [{ index: 7 }],
      wantError: /has no GPU 7 \(it has 2\)/,
    },
  ])('refuses to start on $name', async ({ replicaGpus, wantError }) => {
    const { driver } = tracked();
    await driver.start(wholeGpuJob('first'));
    const second = { jobId: 'second', kind: 'batch', replicas: [{ replica: 0, nodeName: NODE, gpus: replicaGpus }] };
    await expect(driver.start(second)).rejects.toThrow(wantError);
  });

  it('lets fractional shares fill a GPU up to 1000 milli-GPU', async () => {
    const { driver } = tracked();
    const share = (jobId: string, milli: number) => ({
      jobId,
      kind: 'batch',
      replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0, milli }] }],
    });
    await driver.start(share('a', 500));
    await driver.start(share('b', 500));
    await expect(driver.start(share('c', 250))).rejects.toThrow(/has 0 milli-GPU free, 250 asked/);
  });

  it('evicts every job of a drained node with exit code 143', async () => {
    const { driver, events } = tracked();
    await driver.start(wholeGpuJob('on-node', {}, NODE, 0));
    await driver.start(wholeGpuJob('elsewhere', {}, OTHER_NODE, 0));
    await driver.drain(NODE);

    const wantEviction = { jobId: 'on-node', exitCode: SIM_EXIT_CODES.evicted, reason: 'evicted' };
    expect(exitsOf(events)).toEqual([expect.objectContaining(wantEviction)]);
    expect((await driver.status('elsewhere')).state).toBe('running');
  });
});

describe('SimulatedDriver faults', () => {
  it('takes a node down: node-down, its jobs exit 137, its heartbeats stop until recovered', async () => {
    const { driver, events } = tracked({ heartbeats: true, delays: { heartbeatSeconds: 5, startSeconds: 0 } });
    await driver.start(wholeGpuJob('train', {}, NODE, 1));
    await driver.injectFault({ nodeName: NODE, kind: 'node-down' });
    await jest.advanceTimersByTimeAsync(5_000);

    const beatsOf = (name: string) => events.filter((e) => e.type === 'heartbeat' && e.nodeNames.includes(name)).length;
    expect(events.filter((e) => e.type === 'node-down')).toEqual([expect.objectContaining({ nodeName: NODE })]);
    expect(exitsOf(events)).toEqual([expect.objectContaining({ jobId: 'train', exitCode: 137, reason: 'node-lost' })]);
    expect(beatsOf(NODE)).toBe(0);
    expect(beatsOf(OTHER_NODE)).toBe(1);
    await expect(driver.start(wholeGpuJob('again'))).rejects.toThrow(/node a100-s0-l0-n0 is down/);

    await driver.injectFault({ nodeName: NODE, kind: 'recover' });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(events.filter((e) => e.type === 'node-up')).toEqual([expect.objectContaining({ nodeName: NODE })]);
    expect(beatsOf(NODE)).toBe(1);
  });

  it('marks the GPU unhealthy and ends its job on a process-fatal Xid', async () => {
    const { driver, events } = tracked();
    await driver.start(wholeGpuJob('train', {}, NODE, 1));
    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'xid', xid: 79 });

    expect(events.filter((e) => e.type === 'xid')).toEqual([expect.objectContaining({ nodeName: NODE, gpuIndex: 1, xid: 79 })]);
    expect((await gpuOf(driver, NODE, 1)).health).toBe('unhealthy');
    expect(exitsOf(events)).toEqual([expect.objectContaining({ jobId: 'train', reason: 'gpu-fault' })]);

    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'recover' });
    expect((await gpuOf(driver, NODE, 1)).health).toBe('healthy');
  });

  it('leaves the GPU healthy and the job running on an application Xid', async () => {
    const { driver, events } = tracked();
    await driver.start(wholeGpuJob('train', {}, NODE, 1));
    await driver.injectFault({ nodeName: NODE, gpuIndex: 1, kind: 'xid', xid: 13 });

    expect((await gpuOf(driver, NODE, 1)).health).toBe('healthy');
    expect(exitsOf(events)).toEqual([]);
  });

  it('reports a NIC down and back up', async () => {
    const { driver, events } = tracked();
    await driver.injectFault({ nodeName: NODE, kind: 'nic-down' });
    expect((await driver.discover()).nodes.find((n) => n.name === NODE)!.networkUp).toBe(false);
    await driver.injectFault({ nodeName: NODE, kind: 'recover' });

    expect(events.map((e) => e.type)).toEqual(['nic-down', 'nic-up']);
  });
});

describe('SimulatedDriver telemetry', () => {
  it('shows busy GPUs near full SM and power under TDP, idle GPUs at 0 % and idle power', async () => {
    const { driver } = tracked({ delays: { startSeconds: 0 } });
    await driver.start(wholeGpuJob('train', {}, NODE, 0));
    await jest.advanceTimersByTimeAsync(1);

    const samples = await driver.metrics();
    const busy = samples.find((s) => s.nodeName === NODE && s.gpuIndex === 0)!;
    const idle = samples.find((s) => s.nodeName === NODE && s.gpuIndex === 1)!;
    const wantA100 = { idleW: 55, tdpW: 400 };
    expect(samples).toHaveLength(4);
    expect(busy.smPct).toBeGreaterThanOrEqual(90);
    expect(busy.powerW).toBeGreaterThan(wantA100.idleW);
    expect(busy.powerW).toBeLessThanOrEqual(wantA100.tdpW);
    expect(busy.memoryUsedMiB).toBeGreaterThan(0);
    expect(idle).toMatchObject({ smPct: 0, memoryUsedMiB: 0, powerW: wantA100.idleW });
  });

  it('shows a 3g slice as three sevenths of the GPU', async () => {
    const { driver } = tracked({ delays: { startSeconds: 0, migApplySeconds: 0 } });
    const applied = driver.applyMigLayout(NODE, 0, [{ profile: '3g.40gb', start: 0 }]);
    await jest.advanceTimersByTimeAsync(0);
    await applied;
    await driver.start({
      jobId: 'slice',
      kind: 'notebook',
      replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0, migProfile: '3g.40gb' }] }],
    });
    await jest.advanceTimersByTimeAsync(1);

    const sample = (await driver.metrics()).find((s) => s.nodeName === NODE && s.gpuIndex === 0)!;
    expect(sample.smPct).toBeGreaterThanOrEqual((3 / 7) * 90 - 0.1);
    expect(sample.smPct).toBeLessThanOrEqual((3 / 7) * 100);
  });

  it('reports no samples for a node that is down', async () => {
    const { driver } = tracked();
    await driver.injectFault({ nodeName: NODE, kind: 'node-down' });
    expect((await driver.metrics()).map((s) => s.nodeName)).toEqual([OTHER_NODE, OTHER_NODE]);
  });
});

describe('SimulatedDriver timers', () => {
  it('completes zero-second delays on the next tick', async () => {
    const { driver, events } = tracked({ delays: { startSeconds: 0, migApplySeconds: 0 } });
    await driver.start(wholeGpuJob('instant', { durationSeconds: 0 }));
    await jest.advanceTimersByTimeAsync(0);
    expect(exitsOf(events)).toEqual([expect.objectContaining({ jobId: 'instant', exitCode: 0 })]);
  });

  it('clears every timer on close and rejects what was still waiting', async () => {
    const { driver } = tracked({ heartbeats: true });
    await driver.start(wholeGpuJob('train', { durationSeconds: 60 }));
    const applying = driver.applyMigLayout(NODE, 1, [{ profile: '7g.80gb', start: 0 }]);
    expect(jest.getTimerCount()).toBeGreaterThan(0);

    await driver.close();
    expect(jest.getTimerCount()).toBe(0);
    await expect(applying).rejects.toBeInstanceOf(SimulatedDriverClosedError);
  });
});

describe('SimulatedDriver at scale', () => {
  it('simulates a 1,000-node cluster: 8,000 GPUs discovered and sampled', async () => {
    jest.useRealTimers();
    const big = generateTopology({ spines: 5, leavesPerSpine: 10, nodesPerLeaf: 20, gpusPerNode: 8, models: ['H100-80GB', 'A100-80GB'] });
    const driver = new SimulatedDriver({ topology: big, speed: 1000, delays: { startSeconds: 0 } });
    drivers.push(driver);
    await driver.start({ jobId: 'scale', kind: 'training', replicas: [{ replica: 0, nodeName: 'h100-s4-l9-n19', gpus: [{ index: 7 }] }] });

    expect((await driver.discover()).nodes).toHaveLength(1000);
    expect(await driver.metrics()).toHaveLength(8000);
  });
});

describe('SimulatedDriver power', () => {
  const nodeOf = async (driver: SimulatedDriver, name = NODE) => (await driver.discover()).nodes.find((n) => n.name === name)!;

  it('powers off after shutdownSeconds / speed (cordoned, not ready, no heartbeats) and on after bootSeconds / speed', async () => {
    const { driver, events } = tracked({ speed: 10, heartbeats: true, delays: { shutdownSeconds: 60, bootSeconds: 300, heartbeatSeconds: 5 } });
    const off = driver.setPower(NODE, 'off');
    expect(await nodeOf(driver)).toMatchObject({ powerState: 'powering-down', unschedulable: true });
    await jest.advanceTimersByTimeAsync(5_999);
    expect((await nodeOf(driver)).powerState).toBe('powering-down');
    await jest.advanceTimersByTimeAsync(1);
    await off;
    expect(await nodeOf(driver)).toMatchObject({ powerState: 'off', ready: false, unschedulable: true });
    await expect(driver.start(wholeGpuJob('on-an-off-node'))).rejects.toThrow(/powered off/);
    events.length = 0;
    await jest.advanceTimersByTimeAsync(2_000);
    expect(events.filter((e) => e.type === 'heartbeat' && e.nodeNames.includes(NODE))).toHaveLength(0);

    const on = driver.setPower(NODE, 'on');
    expect((await nodeOf(driver)).powerState).toBe('powering-up');
    await jest.advanceTimersByTimeAsync(30_000);
    await on;
    expect(await nodeOf(driver)).toMatchObject({ powerState: 'on', ready: true, unschedulable: false });
    await driver.start(wholeGpuJob('after-boot'));
  });

  it('refuses to power off a node running a job; a power-up-fail fault makes the next power-on fail and the node stay off', async () => {
    const { driver } = tracked({ speed: 100 });
    await driver.start(wholeGpuJob('busy', {}, OTHER_NODE));
    await expect(driver.setPower(OTHER_NODE, 'off')).rejects.toThrow(/still runs jobs busy/);
    expect((await nodeOf(driver, OTHER_NODE)).powerState).toBe('on');

    const off = driver.setPower(NODE, 'off');
    await jest.advanceTimersByTimeAsync(1_000);
    await off;
    await driver.injectFault({ nodeName: NODE, kind: 'power-up-fail' });
    const failed = driver.setPower(NODE, 'on');
    const outcome = expect(failed).rejects.toThrow(/did not come up/);
    await jest.advanceTimersByTimeAsync(3_000);
    await outcome;
    expect((await nodeOf(driver)).powerState).toBe('off');
    // the fault is used up: the next power-on works
    const again = driver.setPower(NODE, 'on');
    await jest.advanceTimersByTimeAsync(3_000);
    await again;
    expect((await nodeOf(driver)).powerState).toBe('on');
  });
});
