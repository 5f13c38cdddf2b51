/**
 * The ClusterDriver contract: one suite, run against every driver that can run here (the
 * simulated driver, the remote driver, and the Kubernetes driver against a real kube-apiserver
 * made to look like a GPU cluster by the kube-emulator). A driver passes when
 * Gantry's worker could not tell which one it talks to.
 */
import type { MigClassId } from '../shared/mig-geometry';
import { MigLayoutError, migProfilesOf } from '../shared/mig-layout';
import type { ClusterDriver, DriverEvent, InventoryNode, StartRequest } from '../types';

export interface DriverContractSubject {
  driver: ClusterDriver;
  /** Seconds of job progress the driver makes per real second (the simulated driver's speed). */
  progressPerSecond: number;
  /**
   * Real seconds a short job runs. Default 0.3; a driver whose jobs run on a (emulated) kubelet in
   * real time needs longer, so that a suspend lands while the job runs.
   */
  shortJobRealSeconds?: number;
  /** How long the suite waits for anything. Default 5 s. */
  waitMs?: number;
  close(): Promise<void>;
}

export type DriverContractCase =
  | 'discover'
  | 'job lifecycle'
  | 'start idempotent'
  | 'start many'
  | 'stop idempotent'
  | 'suspend and resume'
  | 'invalid MIG layout'
  | 'valid MIG layout'
  | 'persona'
  | 'cordon'
  | 'drain'
  | 'events';

export interface DriverContractOptions {
  /** Cases this driver cannot run here, each with the reason. */
  skip?: Partial<Record<DriverContractCase, string>>;
  /** Jest timeout of each case and its hooks. Default: the package's testTimeout. */
  timeoutMs?: number;
}

/** Real seconds a short job runs, and how long the suite waits for anything (defaults). */
const SHORT_JOB_REAL_SECONDS = 0.3;
const LONG_JOB_REAL_SECONDS = 60;
const WAIT_MS = 5_000;

export function describeDriverContract(name: string, makeSubject: () => Promise<DriverContractSubject>, options: DriverContractOptions = {}): void {
  describe(`ClusterDriver contract: ${name}`, () => {
    let subject: DriverContractSubject;
    let driver: ClusterDriver;
    let node: InventoryNode;
    let jobSeq = 0;

    beforeEach(async () => {
      subject = await makeSubject();
      driver = subject.driver;
      const inventory = await driver.discover();
      node = inventory.nodes.find((n) => n.gpus.length >= 2 && n.gpus[0].migCapable)!;
    }, options.timeoutMs);
    afterEach(async () => {
      await driver.close();
      await subject.close();
    }, options.timeoutMs);

    const contractCase = (id: DriverContractCase, title: string, body: () => Promise<void>) => {
      const skipped = options.skip?.[id];
      if (skipped) it.skip(`${title} (skipped: ${skipped})`, body);
      else it(title, body, options.timeoutMs);
    };
    const seconds = (real: number) => real * subject.progressPerSecond;
    const short = () => subject.shortJobRealSeconds ?? SHORT_JOB_REAL_SECONDS;
    const waitFor = (condition: () => boolean | Promise<boolean>) => waitUntil(condition, subject.waitMs ?? WAIT_MS);
    const job = (real: number | undefined, extra: Partial<StartRequest> = {}): StartRequest => ({
      jobId: `contract-${++jobSeq}`,
      kind: 'batch',
      replicas: [{ replica: 0, nodeName: node.name, gpus: [{ index: 1 }] }],
      durationSeconds: real === undefined ? undefined : seconds(real),
      ...extra,
    });
    const recordEvents = () => {
      const events: DriverEvent[] = [];
      const unsubscribe = driver.onEvent((e) => events.push(e));
      return { events, unsubscribe };
    };
    // one node's state as the worker reads it during a step on that node (discover() is compared with it below)
    const findNode = async (nodeName: string) => (await driver.discoverNode(nodeName))!;

    contractCase('discover', 'discovers nodes with their GPUs, leaf and spine', async () => {
      const inventory = await driver.discover();
      expect(inventory.nodes.length).toBeGreaterThan(0);
      expect(node).toBeDefined();
      expect(node.leaf).not.toBe('');
      expect(node.spine).not.toBe('');
      expect(node.gpus.map((g) => g.index)).toEqual(node.gpus.map((_, i) => i));
      expect(node.gpus[0].memoryMiB).toBeGreaterThan(0);
    });

    contractCase('discover', 'discovers one node by name as discover() lists it, and no node for an unknown name', async () => {
      const listed = (await driver.discover()).nodes.find((n) => n.name === node.name);
      expect(await driver.discoverNode(node.name)).toEqual(listed);
      expect(await driver.discoverNode(`${node.name}-not-a-node`)).toBeUndefined();
    });

    contractCase('job lifecycle', 'runs a short job to a job-exited event with exit code 0', async () => {
      const { events } = recordEvents();
      const request = job(short());
      await driver.start(request);
      expect((await driver.status(request.jobId)).state).toBe('running');

      await waitFor(() => events.some((e) => e.type === 'job-exited' && e.jobId === request.jobId));
      expect(events.find((e) => e.type === 'job-exited')).toMatchObject({ jobId: request.jobId, exitCode: 0 });
      const wantStatus = { state: 'exited', exitCode: 0, progressSeconds: request.durationSeconds };
      expect(await driver.status(request.jobId)).toMatchObject(wantStatus);
    });

    contractCase('start idempotent', 'ignores a second start of a job that runs', async () => {
      const request = job(LONG_JOB_REAL_SECONDS);
      await driver.start(request);
      await waitFor(async () => (await driver.status(request.jobId)).progressSeconds > 0);
      const before = (await driver.status(request.jobId)).progressSeconds;

      await driver.start(request);
      expect((await driver.status(request.jobId)).progressSeconds).toBeGreaterThanOrEqual(before);
    });

    contractCase('start many', 'starts many jobs in one call; a refused start fails alone, the others run', async () => {
      const on = (index: number) => job(LONG_JOB_REAL_SECONDS, { replicas: [{ replica: 0, nodeName: node.name, gpus: [{ index }] }] });
      const first = on(0);
      const second = on(1);
      // one GPU more than the node has: refused by every driver
      const tooBig = job(LONG_JOB_REAL_SECONDS, {
        replicas: [{ replica: 0, nodeName: node.name, gpus: [...node.gpus.map((g) => ({ index: g.index })), { index: node.gpus.length }] }],
      });
      const outcomes = await driver.startMany([first, tooBig, second]);
      expect(outcomes.map((o) => [o.jobId, o.ok])).toEqual([
        [first.jobId, true],
        [tooBig.jobId, false],
        [second.jobId, true],
      ]);
      expect(outcomes[1]).toMatchObject({ error: expect.any(Error) });
      for (const started of [first, second]) expect((await driver.status(started.jobId)).state).toBe('running');
      expect((await driver.status(tooBig.jobId)).state).toBe('unknown');
      // idempotent like start(): starting a running job again is a no-op
      await waitFor(async () => (await driver.status(first.jobId)).progressSeconds > 0);
      expect(await driver.startMany([first])).toEqual([{ jobId: first.jobId, ok: true }]);
      expect((await driver.status(first.jobId)).progressSeconds).toBeGreaterThan(0);
      await driver.stop(first.jobId);
      await driver.stop(second.jobId);
    });

    contractCase('stop idempotent', 'stops a job, and stopping it again or an unknown job is a no-op', async () => {
      const request = job(LONG_JOB_REAL_SECONDS);
      await driver.start(request);
      await driver.stop(request.jobId);
      await driver.stop(request.jobId);
      await driver.stop('contract-never-started');
      expect((await driver.status(request.jobId)).state).not.toBe('running');
      expect((await driver.status('contract-never-started')).state).toBe('unknown');
    });

    contractCase('suspend and resume', 'suspends with its progress and, started from it, continues and finishes', async () => {
      const { events } = recordEvents();
      const request = job(short() * 3);
      await driver.start(request);
      await waitFor(async () => (await driver.status(request.jobId)).progressSeconds >= seconds(0.05));

      const { checkpoint, progressSeconds } = await driver.suspend(request.jobId);
      expect(progressSeconds).toBeGreaterThan(0);
      expect(progressSeconds).toBeLessThan(request.durationSeconds!);
      expect(checkpoint).not.toBe('');
      expect((await driver.status(request.jobId)).state).not.toBe('running');

      await driver.start({ ...request, progressSeconds, checkpoint });
      expect((await driver.status(request.jobId)).progressSeconds).toBeGreaterThanOrEqual(progressSeconds);
      await waitFor(() => events.some((e) => e.type === 'job-exited' && e.jobId === request.jobId));
      expect(events.filter((e) => e.type === 'job-exited')).toEqual([expect.objectContaining({ jobId: request.jobId, exitCode: 0 })]);
    });

    contractCase('invalid MIG layout', 'refuses an invalid MIG layout naming the broken rule', async () => {
      const threeG = profileOfClass(node.gpus[0].model, '3g');
      const badStart = [
        { profile: threeG, start: 0 },
        { profile: threeG, start: 2 },
      ];
      await expect(driver.applyMigLayout(node.name, 0, badStart)).rejects.toBeInstanceOf(MigLayoutError);
      await expect(driver.applyMigLayout(node.name, 0, badStart)).rejects.toThrow(/legal-start/);
    });

    contractCase('valid MIG layout', 'applies a valid MIG layout and discovers it', async () => {
      const layout = [
        { profile: profileOfClass(node.gpus[0].model, '4g'), start: 0 },
        { profile: profileOfClass(node.gpus[0].model, '3g'), start: 4 },
      ];
      await driver.applyMigLayout(node.name, 0, layout);
      const gpus = (await findNode(node.name)).gpus;
      expect(gpus[0].migLayout).toEqual(layout);
      expect(gpus[1].migLayout).toEqual([]);
    });

    contractCase('persona', 'switches a node to the vm-passthrough persona', async () => {
      await driver.setPersona(node.name, 'vm-passthrough');
      expect((await findNode(node.name)).persona).toBe('vm-passthrough');
    });

    contractCase('cordon', 'cordons and uncordons a node', async () => {
      await driver.cordon(node.name);
      expect((await findNode(node.name)).unschedulable).toBe(true);
      await driver.uncordon(node.name);
      expect((await findNode(node.name)).unschedulable).toBe(false);
    });

    contractCase('drain', "evicts the node's jobs with a job-exited event", async () => {
      const { events } = recordEvents();
      const request = job(LONG_JOB_REAL_SECONDS);
      await driver.start(request);
      await driver.drain(node.name);

      expect((await driver.status(request.jobId)).state).not.toBe('running');
      await waitFor(() => events.some((e) => e.type === 'job-exited'));
      expect(events.filter((e) => e.type === 'job-exited')).toEqual([expect.objectContaining({ jobId: request.jobId, reason: 'evicted' })]);
      expect((events.find((e) => e.type === 'job-exited') as { exitCode: number }).exitCode).not.toBe(0);
    });

    contractCase('events', 'delivers events to subscribers until they unsubscribe', async () => {
      const stays = recordEvents();
      const leaves = recordEvents();
      leaves.unsubscribe();
      const request = job(short());
      await driver.start(request);

      await waitFor(() => stays.events.some((e) => e.type === 'job-exited'));
      expect(leaves.events).toEqual([]);
    });
  });
}

async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function profileOfClass(model: string, classId: MigClassId): string {
  return migProfilesOf(model).find((p) => p.id === classId)!.name;
}
