/**
 * The Kubernetes driver against a real kube-apiserver (v1.20), authenticated as the
 * gantry-driver ServiceAccount bound to the roles of deploy/kubernetes/rbac.yaml (not
 * cluster-admin). The test plays the kubelet (TestKubelet) and mig-manager; the health signals
 * are posted the way NVSentinel and the node lifecycle controller post them.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DriverEvent } from '../types';
import { xidMessage } from './health-signals';
import { Informer } from './informer';
import { KubeApi, loadClientNode } from './kube-api';
import { KubernetesDriver } from './kubernetes-driver';
import { migConfigName } from './mig-config';
import { podName } from './pods';
import { objectsOf } from './__tests__/manifests';
import { readyCondition, startRealCluster, GPU_OPERATOR_NAMESPACE, WORKLOAD_NAMESPACE, type RealCluster } from './__tests__/real-cluster';
import { TestKubelet } from './__tests__/test-kubelet';
import { pause, waitFor } from './__tests__/wait-for';

const HOOK_MS = 240_000; // a control plane: up to 100 s on a busy machine, and the RBAC objects
const TEST_MS = 60_000;

let cluster: RealCluster;
let kubelet: TestKubelet;
let migManager: Informer<V1Node>;
let driver: KubernetesDriver;
let events: DriverEvent[];

const k8s = () => loadClientNode();
const strategic = () => k8s().setHeaderOptions('Content-Type', k8s().PatchStrategy.StrategicMergePatch);
const merge = () => k8s().setHeaderOptions('Content-Type', k8s().PatchStrategy.MergePatch);

beforeAll(async () => {
  cluster = await startRealCluster();
  kubelet = new TestKubelet(cluster.admin.config, WORKLOAD_NAMESPACE);
  await kubelet.start();
  // mig-manager: applies a new nvidia.com/mig.config (state removed by the driver) with success.
  migManager = new Informer<V1Node>({
    what: 'test mig-manager',
    source: new KubeApi(cluster.admin.config).nodeInformerSource(),
    onDelta: ({ type, object }) => {
      const labels = object.metadata?.labels ?? {};
      if (type === 'DELETED' || !labels['nvidia.com/mig.config'] || labels['nvidia.com/mig.config.state']) return;
      const body = { metadata: { labels: { 'nvidia.com/mig.config.state': 'success' } } };
      void cluster.admin.core.patchNode({ name: object.metadata!.name!, body }, merge()).catch(() => undefined);
    },
    warn: () => undefined,
  });
  migManager.start();
  for (const object of objectsOf('mig-parted-config.yaml')) await cluster.admin.objects.create(object);
}, HOOK_MS);

afterAll(async () => {
  await migManager?.stop();
  await kubelet?.stop();
  await cluster?.stop();
}, HOOK_MS);

beforeEach(async () => {
  driver = new KubernetesDriver({ kubeConfig: cluster.driverConfig, pollSeconds: 0.05, apiRetrySeconds: 10, watchBackoff: { initialMs: 50, maxMs: 500 } });
  events = [];
  driver.onEvent((e) => events.push(e));
  await driver.watches!.synced();
});

afterEach(async () => {
  await driver.close();
});

const job = (jobId: string, nodeName: string, gpus: number) => ({
  jobId,
  kind: 'batch',
  replicas: [{ replica: 0, nodeName, gpus: Array.from({ length: gpus }, (_, index) => ({ index })) }],
});
const exitsOf = (jobId: string) => events.filter((e) => e.type === 'job-exited' && e.jobId === jobId);
const podPhase = async (jobId: string) =>
  (await cluster.admin.core.readNamespacedPod({ namespace: WORKLOAD_NAMESPACE, name: podName(jobId, 0) })).status?.phase;
async function setCondition(nodeName: string, condition: Record<string, string>) {
  const now = new Date().toISOString();
  const body = { status: { conditions: [{ lastHeartbeatTime: now, lastTransitionTime: now, reason: condition.type, ...condition }] } };
  await cluster.admin.core.patchNodeStatus({ name: nodeName, body }, strategic());
}

describe('KubernetesDriver on a real API server, as the gantry-driver ServiceAccount', () => {
  it(
    'discovers GPU nodes and counts the GPUs of pods it did not create as used',
    async () => {
      await cluster.addGpuNode('inv-a');
      await cluster.admin.core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'someone-elses-training' },
          spec: { nodeName: 'inv-a', containers: [{ name: 'c', image: 'x', resources: { limits: { 'nvidia.com/gpu': '6' } } }] },
        },
      });
      const node = (await driver.discover()).nodes.find((n) => n.name === 'inv-a')!;
      expect(node).toMatchObject({ ready: true, networkUp: true, externalGpuUse: { 'nvidia.com/gpu': 6 } });
      expect(node.gpus.map((g) => g.health)).toEqual(Array(8).fill('healthy'));

      await expect(driver.start(job('too-big', 'inv-a', 3))).rejects.toThrow(
        /does not fit on node inv-a: nvidia.com\/gpu: 8 allocatable, 6 in use \(6 by pods Gantry did not create\), 3 asked/,
      );
      expect((await driver.status('too-big')).state).toBe('unknown');
      await driver.start(job('fits', 'inv-a', 2));
      await waitFor('the pod to run', async () => (await podPhase('fits')) === 'Running');
      await expect(driver.start(job('one-more', 'inv-a', 1))).rejects.toThrow(/8 in use/);
    },
    TEST_MS,
  );

  it(
    'suspends with the checkpoint the workload saved on SIGTERM, else with its own reference',
    async () => {
      await cluster.addGpuNode('ckpt-a');
      kubelet.checkpointOnSigterm = (pod) =>
        pod.metadata?.labels?.['gantry.io/job-id'] === 'saves' ? { checkpoint: 's3://ckpt/saves/step-4200', progressSeconds: 42 } : undefined;
      kubelet.holdTerminating = 300; // the workload writes, then takes a moment to exit
      try {
        await driver.start({ ...job('saves', 'ckpt-a', 1), durationSeconds: 600 });
        await driver.start({
          ...job('saves-nothing', 'ckpt-a', 1),
          replicas: [{ replica: 0, nodeName: 'ckpt-a', gpus: [{ index: 1 }] }],
          durationSeconds: 600,
        });
        await waitFor('both running', async () => (await podPhase('saves')) === 'Running' && (await podPhase('saves-nothing')) === 'Running');

        expect(await driver.suspend('saves')).toEqual({ checkpoint: 's3://ckpt/saves/step-4200', progressSeconds: 42 });
        const fallback = await driver.suspend('saves-nothing');
        expect(fallback.checkpoint).toMatch(/^k8s-checkpoint:\/\/gantry\/saves-nothing\/\d+\.\d{3}$/);
        expect(fallback.progressSeconds).toBeGreaterThanOrEqual(0);
      } finally {
        kubelet.checkpointOnSigterm = undefined;
        kubelet.holdTerminating = 0;
      }
    },
    TEST_MS,
  );

  it(
    'starts a job on GPUs a stopped job still holds once its pod is gone, instead of refusing',
    async () => {
      await cluster.addGpuNode('reuse-a');
      await driver.start(job('first', 'reuse-a', 8));
      await waitFor('the first job to run', async () => (await podPhase('first')) === 'Running');
      kubelet.holdTerminating = 1_000;
      try {
        await driver.stop('first');
        expect((await driver.status('first')).state).toBe('unknown'); // a pod being deleted is not the job's
        await driver.start(job('second', 'reuse-a', 8));
        await expect(podPhase('first')).rejects.toMatchObject({ code: 404 });
        await waitFor('the second job to run', async () => (await podPhase('second')) === 'Running');
      } finally {
        kubelet.holdTerminating = 0;
      }
      await driver.stop('second');
    },
    TEST_MS,
  );

  it(
    'runs a job as a pod and reports its exit once, from the watch',
    async () => {
      await cluster.addGpuNode('run-a');
      await driver.start(job('runs', 'run-a', 1));
      await driver.start(job('runs', 'run-a', 1)); // idempotent
      await waitFor('the job to run', async () => (await driver.status('runs')).state === 'running' && (await podPhase('runs')) === 'Running');

      await kubelet.finish(podName('runs', 0), 0);
      await waitFor('job-exited', () => exitsOf('runs').length > 0);
      await pause(300);
      expect(exitsOf('runs')).toEqual([expect.objectContaining({ exitCode: 0, reason: 'completed' })]);

      await driver.stop('runs');
      await waitFor('the pod to go', async () => (await driver.status('runs')).state === 'unknown');
    },
    TEST_MS,
  );

  it(
    'drains with the Eviction API version the server serves (policy/v1beta1 on v1.20)',
    async () => {
      expect(await new KubeApi(cluster.driverConfig).evictionApiVersion()).toBe('policy/v1beta1');
      await cluster.addGpuNode('drain-a');
      await driver.start(job('victim', 'drain-a', 1));
      await waitFor('the job to run', async () => (await podPhase('victim')) === 'Running');

      await driver.drain('drain-a');
      expect((await driver.status('victim')).state).toBe('unknown');
      await waitFor('job-exited', () => exitsOf('victim').length > 0);
      expect(exitsOf('victim')).toEqual([expect.objectContaining({ reason: 'evicted', exitCode: 143 })]);
    },
    TEST_MS,
  );

  it(
    "cordons and labels nodes without touching other writers' labels",
    async () => {
      await cluster.addGpuNode('label-a', { labels: { 'example.com/team': 'vision' } });
      await driver.cordon('label-a');
      await driver.setPersona('label-a', 'inference');
      const node = (await driver.discover()).nodes.find((n) => n.name === 'label-a')!;
      expect(node).toMatchObject({ unschedulable: true, persona: 'inference' });
      expect(node.labels).toMatchObject({ 'example.com/team': 'vision', 'nvidia.com/gpu.workload.config': 'container' });
      await driver.uncordon('label-a');
      expect((await driver.discover()).nodes.find((n) => n.name === 'label-a')!.unschedulable).toBe(false);
      // The ServiceAccount may do what the driver does, nothing more.
      const asDriver = cluster.driverConfig.makeApiClient(k8s().CoreV1Api);
      await expect(asDriver.deleteNode({ name: 'label-a' })).rejects.toMatchObject({ code: 403 });
      await expect(asDriver.listSecretForAllNamespaces()).rejects.toMatchObject({ code: 403 });
    },
    TEST_MS,
  );

  it(
    'retries conflicts on a fresh read: concurrent MIG layouts and other writers all survive',
    async () => {
      await cluster.addGpuNode('mig-a');
      const sevenG = [{ profile: '7g.80gb', start: 0 }];
      const foreignConfigWriter = async () => {
        for (let attempt = 0; attempt < 10; attempt++) {
          const cm = await cluster.admin.core.readNamespacedConfigMap({ namespace: GPU_OPERATOR_NAMESPACE, name: 'gantry-mig-parted-config' });
          const text = cm.data!['config.yaml'].replace('mig-configs:\n', 'mig-configs:\n  custom-by-admin:\n    - devices: all\n      mig-enabled: false\n');
          try {
            return await cluster.admin.core.replaceNamespacedConfigMap({
              namespace: GPU_OPERATOR_NAMESPACE,
              name: cm.metadata!.name!,
              body: { ...cm, data: { 'config.yaml': text } },
            });
          } catch (err) {
            if ((err as { code?: number }).code !== 409) throw err;
          }
        }
        throw new Error('the foreign writer kept conflicting');
      };
      await Promise.all([
        driver.applyMigLayout('mig-a', 0, sevenG),
        driver.applyMigLayout('mig-a', 1, sevenG),
        cluster.admin.core.patchNode({ name: 'mig-a', body: { metadata: { labels: { 'example.com/owner': 'ops' } } } }, merge()),
        foreignConfigWriter(),
      ]);
      const node = await cluster.admin.core.readNode({ name: 'mig-a' });
      expect(node.metadata!.labels).toMatchObject({ 'example.com/owner': 'ops', 'nvidia.com/mig.config': migConfigName({ 0: sevenG, 1: sevenG }) });
      const gpus = (await driver.discover()).nodes.find((n) => n.name === 'mig-a')!.gpus;
      expect(gpus.map((g) => g.migLayout.length)).toEqual([1, 1, 0, 0, 0, 0, 0, 0]);
      const cm = await cluster.admin.core.readNamespacedConfigMap({ namespace: GPU_OPERATOR_NAMESPACE, name: 'gantry-mig-parted-config' });
      const configs = Object.keys(k8s().loadYaml<{ 'mig-configs': Record<string, unknown> }>(cm.data!['config.yaml'])['mig-configs']);
      expect(configs).toEqual(expect.arrayContaining(['all-disabled', 'custom-by-admin', migConfigName({ 0: sevenG, 1: sevenG })]));
    },
    TEST_MS,
  );

  it(
    'turns health conditions, taints and node events into the failover loop’s events',
    async () => {
      await cluster.addGpuNode('health-a');
      await driver.start(job('on-health-a', 'health-a', 1));
      await waitFor('the job to run', async () => (await podPhase('on-health-a')) === 'Running');
      await waitFor('the new node to be up', () => events.some((e) => e.type === 'node-up' && e.nodeName === 'health-a'));
      events.length = 0; // from here on, only the signals below
      const of = (type: DriverEvent['type']) => events.filter((e) => e.type === type && 'nodeName' in e && e.nodeName === 'health-a');

      await setCondition('health-a', { type: 'SysLogsXIDError', status: 'True', message: `${xidMessage(79, 3)} Recommended Action=RESTART_BM;` });
      await waitFor('the Xid', () => of('xid').length === 1);
      expect(of('xid')[0]).toMatchObject({ gpuIndex: 3, xid: 79 });
      const gpus = (await driver.discover()).nodes.find((n) => n.name === 'health-a')!.gpus;
      expect(gpus.map((g) => g.health)).toEqual(['healthy', 'healthy', 'healthy', 'unhealthy', 'healthy', 'healthy', 'healthy', 'healthy']);

      const now = new Date();
      await cluster.admin.core.createNamespacedEvent({
        namespace: 'default',
        body: {
          metadata: { name: 'health-a.xid13' },
          involvedObject: { kind: 'Node', name: 'health-a', apiVersion: 'v1' },
          reason: 'SysLogsXIDError',
          type: 'Warning',
          message: xidMessage(13, 1, 'Graphics Engine Exception'),
          source: { component: 'syslog-health-monitor', host: 'health-a' },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
      await waitFor('the event Xid', () => of('xid').length === 2);
      expect(of('xid')[1]).toMatchObject({ gpuIndex: 1, xid: 13 });

      await setCondition('health-a', { type: 'InfiniBandStateCheck', status: 'True', message: 'Port mlx5_0 port 1 DOWN' });
      await waitFor('nic-down', () => of('nic-down').length === 1);
      expect((await driver.discover()).nodes.find((n) => n.name === 'health-a')!.networkUp).toBe(false);
      await setCondition('health-a', { type: 'InfiniBandStateCheck', status: 'False', message: 'healthy' });
      await waitFor('nic-up', () => of('nic-up').length === 1);

      await cluster.admin.core.patchNodeStatus({ name: 'health-a', body: { status: { conditions: [readyCondition(false)] } } }, strategic());
      await waitFor('node-down', () => of('node-down').length === 1);
      await cluster.admin.core.patchNodeStatus({ name: 'health-a', body: { status: { conditions: [readyCondition(true)] } } }, strategic());
      await waitFor('node-up', () => of('node-up').length === 1);
      await cluster.admin.core.patchNode(
        { name: 'health-a', body: { spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] } } },
        strategic(),
      );
      await waitFor('node-down from the taint', () => of('node-down').length === 2);
      await cluster.admin.core.patchNode({ name: 'health-a', body: { spec: { taints: [] } } }, merge());
      await waitFor('node-up', () => of('node-up').length === 2);

      await cluster.admin.core.deleteNode({ name: 'health-a' });
      await waitFor('node-down for the deleted node', () => of('node-down').length === 3);
      await waitFor('the job lost with its node', () => exitsOf('on-health-a').length === 1);
      await pause(300);
      expect(exitsOf('on-health-a')).toEqual([expect.objectContaining({ reason: 'node-lost', exitCode: 137 })]);
      expect(of('xid')).toHaveLength(2);
    },
    TEST_MS,
  );
});
