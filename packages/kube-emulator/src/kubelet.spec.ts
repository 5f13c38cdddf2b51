/**
 * Against a real kube-apiserver: the emulated kubelet runs pods bound to its nodes through their
 * phases, refuses pods the node's devices cannot hold, honours graceful deletion (SIGTERM, the
 * checkpoint, removal within the grace period), and the Kubernetes driver sees its jobs finish.
 */
import { KubernetesDriver, kubernetesSpecs } from '@gantry/driver';
import type { V1Pod } from '@kubernetes/client-node';
import type { Emulator } from './emulator';
import { Informer } from './kube/informer';
import { emulatorOn, ensureNamespace, eventually, smallTopology, startCluster, teardown, type Cluster } from './__tests__/harness';

const { GANTRY_ANNOTATIONS, replicaPod } = kubernetesSpecs;
const NS = 'gantry';

let cluster: Cluster | undefined;
let emulator: Emulator | undefined;

beforeAll(async () => {
  cluster = await startCluster();
  emulator = await emulatorOn(cluster, { topology: smallTopology(2, 8), delays: { startSeconds: 0.3, sigtermSeconds: 1.5 } });
  await ensureNamespace(cluster.core, NS);
});

afterAll(() => teardown([emulator], cluster));

function pod(jobId: string, nodeName: string, gpus: number[], durationSeconds?: number): V1Pod {
  const replica = { replica: 0, nodeName, gpus: gpus.map((index) => ({ index })) };
  return replicaPod({ request: { jobId, kind: 'training', replicas: [replica], durationSeconds }, replica, namespace: NS, defaultImage: 'busybox' });
}

/** Every version of a pod the API server sends on a watch, until stop(). */
function recordPod(name: string): { versions: V1Pod[]; stop(): void } {
  const versions: V1Pod[] = [];
  const informer = new Informer<V1Pod>({
    config: cluster!.config,
    path: `/api/v1/namespaces/${NS}/pods`,
    fieldSelector: `metadata.name=${name}`,
    list: () => cluster!.core.listNamespacedPod({ namespace: NS, fieldSelector: `metadata.name=${name}` }),
    onChange: (_event, pod) => versions.push(pod),
  });
  void informer.start();
  return { versions, stop: () => informer.stop() };
}

const read = (name: string) => cluster!.core.readNamespacedPod({ namespace: NS, name });
const exists = async (name: string) => {
  try {
    await read(name);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw err;
  }
};

describe('kubelet', () => {
  it('runs a bound pod Pending -> Running -> Succeeded after its duration', async () => {
    const created = await cluster!.core.createNamespacedPod({ namespace: NS, body: pod('phases', 'gpu-node-0', [0], 1.5) });
    expect(created.status?.phase).toBe('Pending');
    const running = await eventually('Running', async () =>
      (await read('gantry-phases-r0')).status?.phase === 'Running' ? await read('gantry-phases-r0') : undefined,
    );
    const runningSeenAt = Date.now();
    expect(running.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBeDefined();
    expect(running.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const done = await eventually('Succeeded', async () =>
      (await read('gantry-phases-r0')).status?.phase === 'Succeeded' ? await read('gantry-phases-r0') : undefined,
    );
    // timestamps on the wire have whole seconds: time the phases from here
    const ranMs = Date.now() - runningSeenAt;
    expect(done.status!.containerStatuses![0].state!.terminated!.exitCode).toBe(0);
    expect(ranMs).toBeGreaterThanOrEqual(1300);
    expect(ranMs).toBeLessThan(4000);
  });

  it('leaves pods of other nodes alone', async () => {
    await cluster!.core.createNamespacedPod({ namespace: NS, body: pod('elsewhere', 'not-emulated', [0]) });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await read('gantry-elsewhere-r0')).status?.phase).toBe('Pending');
  });

  it('refuses at admission a pod asking for more GPUs than the node has free', async () => {
    await cluster!.core.createNamespacedPod({ namespace: NS, body: pod('big-a', 'gpu-node-1', [0, 1, 2, 3, 4, 5]) });
    await eventually('big-a running', async () => ((await read('gantry-big-a-r0')).status?.phase === 'Running' ? true : undefined));
    await cluster!.core.createNamespacedPod({ namespace: NS, body: pod('big-b', 'gpu-node-1', [6, 7, 0]) });
    const refused = await eventually('big-b refused', async () =>
      (await read('gantry-big-b-r0')).status?.phase === 'Failed' ? await read('gantry-big-b-r0') : undefined,
    );
    expect(refused.status?.reason).toBe('UnexpectedAdmissionError');
    expect(refused.status?.message).toContain('nvidia.com/gpu. Requested: 3, Available: 2');
  });

  it('deletes gracefully: SIGTERM, the checkpoint saved on the pod, then the pod removed', async () => {
    const seen = recordPod('gantry-graceful-r0');
    try {
      await cluster!.core.createNamespacedPod({ namespace: NS, body: pod('graceful', 'gpu-node-0', [5]) });
      await eventually('Running', async () => ((await read('gantry-graceful-r0')).status?.phase === 'Running' ? true : undefined));
      await new Promise((r) => setTimeout(r, 500));
      const deletedAt = Date.now();
      await cluster!.core.deleteNamespacedPod({ namespace: NS, name: 'gantry-graceful-r0', gracePeriodSeconds: 10 });
      expect((await read('gantry-graceful-r0')).metadata?.deletionTimestamp).toBeDefined();
      await eventually('the pod removed', async () => ((await exists('gantry-graceful-r0')) ? undefined : true));
      const tookMs = Date.now() - deletedAt;
      // the workload's 1.5 s to save and exit, well inside the 10 s grace period
      expect(tookMs).toBeGreaterThanOrEqual(1400);
      expect(tookMs).toBeLessThan(6000);
      const saved = seen.versions.map((p) => p.metadata?.annotations?.[GANTRY_ANNOTATIONS.checkpointSaved]).find(Boolean);
      const checkpoint = JSON.parse(saved!) as { checkpoint: string; progressSeconds: number };
      expect(checkpoint.checkpoint).toMatch(/^k8s-checkpoint:\/\/gantry\/graceful\//);
      expect(checkpoint.progressSeconds).toBeGreaterThan(1.5);
      const last = seen.versions.at(-1)!;
      expect(last.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(143);
    } finally {
      seen.stop();
    }
  });

  it('kills a workload that has not saved its checkpoint when the grace period ends', async () => {
    const seen = recordPod('gantry-hurried-r0');
    try {
      await cluster!.core.createNamespacedPod({ namespace: NS, body: pod('hurried', 'gpu-node-0', [4]) });
      await eventually('Running', async () => ((await read('gantry-hurried-r0')).status?.phase === 'Running' ? true : undefined));
      const deletedAt = Date.now();
      await cluster!.core.deleteNamespacedPod({ namespace: NS, name: 'gantry-hurried-r0', gracePeriodSeconds: 1 });
      await eventually('the pod removed', async () => ((await exists('gantry-hurried-r0')) ? undefined : true));
      const tookMs = Date.now() - deletedAt;
      expect(tookMs).toBeGreaterThanOrEqual(900);
      expect(tookMs).toBeLessThan(1500 + 2000);
      expect(seen.versions.some((p) => p.metadata?.annotations?.[GANTRY_ANNOTATIONS.checkpointSaved])).toBe(false);
      expect(seen.versions.at(-1)!.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(137);
    } finally {
      seen.stop();
    }
  });

  it('runs the driver’s jobs: start, running progress, exit reported by status()', async () => {
    const driver = new KubernetesDriver({ kubeconfigPath: cluster!.controlPlane.kubeconfigPath, pollSeconds: 0.1 });
    try {
      await driver.start({
        jobId: 'driver-job',
        kind: 'training',
        durationSeconds: 1,
        replicas: [{ replica: 0, nodeName: 'gpu-node-0', gpus: [{ index: 6 }, { index: 7 }] }],
      });
      await eventually('running', async () => ((await driver.status('driver-job')).starting === undefined ? true : undefined));
      const exited = await eventually('exited', async () => {
        const status = await driver.status('driver-job');
        return status.state === 'exited' ? status : undefined;
      });
      expect(exited).toMatchObject({ exitCode: 0, progressSeconds: 1 });
    } finally {
      await driver.close();
    }
  });
});
