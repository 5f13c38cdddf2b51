/**
 * The Kubernetes driver against a real kube-apiserver made to look like a GPU cluster by the
 * kube-emulator (kubelet, mig-manager, NVSentinel-style health signals, dcgm-exporter): the driver
 * on the gantry-driver ServiceAccount's token, the emulator as admin. One cluster for the file;
 * each test works on a node of its own (a "slot").
 */
import type { DriverEvent, KubernetesDriverOptions } from '../index';
import { loadClientNode } from './kube-api';
import { KubernetesDriver } from './kubernetes-driver';
import { migConfigName } from './mig-config';
import { podName } from './pods';
import { startEmulatedCluster, type EmulatedCluster } from './__tests__/emulated-cluster';
import { GPU_OPERATOR_NAMESPACE, WORKLOAD_NAMESPACE } from './__tests__/real-cluster';
import { waitFor } from './__tests__/wait-for';
import { warmUpClientNode } from './__tests__/warm-up';

const TEST_MS = 90_000;
const sevenG = [{ profile: '7g.80gb', start: 0 }];
const SLOT = { discover: 0, mig: 1, migKeeps: 2, migFails: 3, migTimeout: 4, gangA: 5, gangB: 6, drain: 7, health: 8, metrics: 9 };

let cluster: EmulatedCluster;
const drivers: KubernetesDriver[] = [];

beforeAll(async () => {
  await warmUpClientNode();
  cluster = await startEmulatedCluster({ slots: Object.keys(SLOT).length, gpusPerNode: 8 });
}, 240_000);

afterEach(async () => {
  await Promise.all(drivers.splice(0).map((d) => d.close()));
});

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

function driverFor(slot: number | undefined, options: KubernetesDriverOptions = {}): KubernetesDriver {
  const nodeLabelSelector = slot === undefined ? undefined : cluster.slotSelector(slot);
  const driver = new KubernetesDriver({ kubeConfig: cluster.driverConfig, nodeLabelSelector, pollSeconds: 0.05, ...options });
  drivers.push(driver);
  return driver;
}

const phase = async (jobId: string) =>
  (await cluster.admin.core.readNamespacedPod({ namespace: WORKLOAD_NAMESPACE, name: podName(jobId, 0) }).catch(() => undefined))?.status?.phase;

async function runJob(driver: KubernetesDriver, jobId: string, slot: number, gpuIndex: number, durationSeconds?: number): Promise<void> {
  await driver.start({ jobId, kind: 'batch', durationSeconds, replicas: [{ replica: 0, nodeName: cluster.slotNode(slot), gpus: [{ index: gpuIndex }] }] });
  await waitFor(`job ${jobId} running`, async () => (await phase(jobId)) === 'Running', 30_000);
}

describe('KubernetesDriver on a real API server + the kube-emulator', () => {
  it(
    'discovers only nodes with GPU discovery labels',
    async () => {
      await cluster.admin.core.createNode({ body: { metadata: { name: 'cpu-only', labels: { 'kubernetes.io/hostname': 'cpu-only' } } } });
      const names = (await driverFor(undefined).discover()).nodes.map((n) => n.name).sort();
      expect(names).toEqual(
        Object.values(SLOT)
          .map((i) => cluster.slotNode(i))
          .sort(),
      );
      const [node] = (await driverFor(SLOT.discover).discover()).nodes;
      expect(node).toMatchObject({ name: cluster.slotNode(SLOT.discover), leaf: 'leaf-t', spine: 'spine-t', ready: true, networkUp: true });
      expect(node.gpus).toHaveLength(8);
    },
    TEST_MS,
  );

  it(
    'publishes a named mig-parted config, labels the node with it, and mig-manager applies it',
    async () => {
      const name = cluster.slotNode(SLOT.mig);
      const driver = driverFor(SLOT.mig);
      await driver.applyMigLayout(name, 2, sevenG);

      const wantName = migConfigName({ 2: sevenG });
      const node = await cluster.admin.core.readNode({ name });
      expect(node.metadata?.labels).toMatchObject({ 'nvidia.com/mig.config': wantName, 'nvidia.com/mig.config.state': 'success' });
      expect(node.status?.allocatable?.['nvidia.com/mig-7g.80gb']).toBe('1');
      const configMap = await cluster.admin.core.readNamespacedConfigMap({ namespace: GPU_OPERATOR_NAMESPACE, name: 'gantry-mig-parted-config' });
      const config = loadClientNode().loadYaml<{ 'mig-configs': Record<string, unknown> }>(configMap.data!['config.yaml']);
      expect(config['mig-configs'][wantName]).toEqual([
        { devices: [0, 1, 3, 4, 5, 6, 7], 'mig-enabled': false },
        { devices: [2], 'mig-enabled': true, 'mig-devices': { '7g.80gb': 1 } },
      ]);
      expect((await driver.discover()).nodes[0].gpus[2].migLayout).toEqual(sevenG);
    },
    TEST_MS,
  );

  it(
    'keeps the layouts of the other GPUs when one GPU changes',
    async () => {
      const name = cluster.slotNode(SLOT.migKeeps);
      const driver = driverFor(SLOT.migKeeps);
      await driver.applyMigLayout(name, 0, sevenG);
      await driver.applyMigLayout(name, 1, sevenG);
      const gpus = (await driver.discover()).nodes[0].gpus;
      expect(gpus.map((g) => g.migLayout.length)).toEqual([1, 1, 0, 0, 0, 0, 0, 0]);
    },
    TEST_MS,
  );

  it(
    'fails when mig-manager reports the config as failed (a pod runs on the GPU)',
    async () => {
      const driver = driverFor(SLOT.migFails);
      await runJob(driver, 'holds-gpu-0', SLOT.migFails, 0);
      await expect(driver.applyMigLayout(cluster.slotNode(SLOT.migFails), 0, sevenG)).rejects.toThrow(/nvidia.com\/mig.config.state=failed/);
    },
    TEST_MS,
  );

  it(
    'gives up waiting for mig-manager after the timeout',
    async () => {
      const driver = driverFor(SLOT.migTimeout, { migApplyTimeoutSeconds: 0.05, pollSeconds: 0.01 });
      await expect(driver.applyMigLayout(cluster.slotNode(SLOT.migTimeout), 0, sevenG)).rejects.toThrow(/timed out after 0.05 s waiting for MIG config/);
    },
    TEST_MS,
  );

  it(
    'creates one pod per replica, bound to its node, asking for its GPUs; the kubelet runs them',
    async () => {
      const driver = driverFor(undefined);
      const [a, b] = [cluster.slotNode(SLOT.gangA), cluster.slotNode(SLOT.gangB)];
      await driver.start({
        jobId: 'gang',
        kind: 'training',
        replicas: [
          { replica: 0, nodeName: a, gpus: [{ index: 0 }, { index: 1 }] },
          { replica: 1, nodeName: b, gpus: [{ index: 0 }, { index: 1 }] },
        ],
      });
      const pods = (await cluster.admin.core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE, labelSelector: 'gantry.io/job-id=gang' })).items;
      expect(pods.map((p) => [p.metadata?.name, p.spec?.nodeName, p.spec?.containers[0].resources?.limits]).sort()).toEqual([
        ['gantry-gang-r0', a, { 'nvidia.com/gpu': '2' }],
        ['gantry-gang-r1', b, { 'nvidia.com/gpu': '2' }],
      ]);
      await waitFor('both replicas running', async () => !(await driver.status('gang')).starting, 30_000);
      expect((await driver.status('gang')).state).toBe('running');
    },
    TEST_MS,
  );

  it(
    'drains through the Eviction API and leaves DaemonSet pods alone',
    async () => {
      const name = cluster.slotNode(SLOT.drain);
      const ownerReferences = [{ kind: 'DaemonSet', name: 'nvidia-dcgm-exporter', apiVersion: 'apps/v1', uid: '6a1c0f1e-0000-4000-8000-000000000001' }];
      await cluster.admin.core.createNamespacedPod({
        namespace: GPU_OPERATOR_NAMESPACE,
        body: {
          metadata: { name: 'nvidia-dcgm-exporter-x', ownerReferences },
          spec: { nodeName: name, containers: [{ name: 'exporter', image: 'dcgm-exporter' }] },
        },
      });
      const driver = driverFor(SLOT.drain);
      const events: DriverEvent[] = [];
      driver.onEvent((e) => events.push(e));
      await runJob(driver, 'victim', SLOT.drain, 0);
      await driver.drain(name);

      expect(await phase('victim')).toBeUndefined();
      const left = await cluster.admin.core.listNamespacedPod({ namespace: GPU_OPERATOR_NAMESPACE, fieldSelector: `spec.nodeName=${name}` });
      expect(left.items.map((p) => p.metadata?.name)).toEqual(['nvidia-dcgm-exporter-x']);
      expect(events.filter((e) => e.type === 'job-exited')).toEqual([expect.objectContaining({ jobId: 'victim', reason: 'evicted', exitCode: 143 })]);
    },
    TEST_MS,
  );

  it(
    'reads the health signals the emulator posts as NVSentinel and the node lifecycle controller do',
    async () => {
      const nodeName = cluster.slotNode(SLOT.health);
      const driver = driverFor(SLOT.health);
      const events: DriverEvent[] = [];
      driver.onEvent((e) => events.push(e));
      await driver.watches!.synced();
      const seen = (what: string, match: (e: DriverEvent) => boolean) => waitFor(what, () => events.some(match), 30_000);
      await runJob(driver, 'on-gpu-3', SLOT.health, 3);
      await runJob(driver, 'on-gpu-0', SLOT.health, 0);

      // A fatal Xid: a SysLogsXIDError condition; the GPU is unhealthy and the job on it dies, a
      // GPU fault with the exit code of its CUDA error (failover moves it; status() says the same).
      await cluster.emulator.injectFault({ nodeName, kind: 'xid', gpuIndex: 3, xid: 79 });
      await seen('xid 79 on GPU 3', (e) => e.type === 'xid' && e.gpuIndex === 3 && e.xid === 79);
      await seen('the job on GPU 3 failing', (e) => e.type === 'job-exited' && e.jobId === 'on-gpu-3');
      expect(events.find((e) => e.type === 'job-exited' && e.jobId === 'on-gpu-3')).toMatchObject({ reason: 'gpu-fault', exitCode: 1 });
      expect(await driver.status('on-gpu-3')).toMatchObject({ state: 'exited', exitCode: 1, reason: 'gpu-fault' });
      expect((await driver.discover()).nodes[0].gpus[3].health).toBe('unhealthy');

      // An application Xid: an Event; the GPU stays healthy.
      await cluster.emulator.injectFault({ nodeName, kind: 'xid', gpuIndex: 1, xid: 13 });
      await seen('xid 13 on GPU 1', (e) => e.type === 'xid' && e.gpuIndex === 1 && e.xid === 13);
      expect((await driver.discover()).nodes[0].gpus[1].health).not.toBe('unhealthy');

      await cluster.emulator.injectFault({ nodeName, kind: 'nic-down' });
      await seen('nic-down', (e) => e.type === 'nic-down' && e.nodeName === nodeName);

      // The node down: Ready=Unknown and the unreachable taints; its pod fails with NodeLost.
      await cluster.emulator.injectFault({ nodeName, kind: 'node-down' });
      await seen('node-down', (e) => e.type === 'node-down' && e.nodeName === nodeName);
      await seen('the job on GPU 0 lost', (e) => e.type === 'job-exited' && e.jobId === 'on-gpu-0');
      expect(events.find((e) => e.type === 'job-exited' && e.jobId === 'on-gpu-0')).toMatchObject({ reason: 'node-lost', exitCode: 137 });

      await cluster.emulator.injectFault({ nodeName, kind: 'recover' });
      await seen('node-up', (e) => e.type === 'node-up' && e.nodeName === nodeName);
      await seen('nic-up', (e) => e.type === 'nic-up' && e.nodeName === nodeName);
      const node = (await driver.discover()).nodes[0];
      expect(node.gpus.every((g) => g.health !== 'unhealthy')).toBe(true);
      // Each signal once: one xid per fault, one exit per job.
      expect(events.filter((e) => e.type === 'xid').map((e) => e.type === 'xid' && [e.gpuIndex, e.xid])).toEqual([
        [3, 79],
        [1, 13],
      ]);
      expect(events.filter((e) => e.type === 'job-exited')).toHaveLength(2);
    },
    TEST_MS,
  );

  it(
    'reads GPU telemetry from dcgm-exporter',
    async () => {
      const driver = driverFor(SLOT.metrics, { dcgmMetricsUrl: cluster.emulator.metricsUrl });
      await runJob(driver, 'busy', SLOT.metrics, 3);
      const samples = await driver.metrics();
      const busy = samples.find((s) => s.nodeName === cluster.slotNode(SLOT.metrics) && s.gpuIndex === 3)!;
      const idle = samples.find((s) => s.nodeName === cluster.slotNode(SLOT.metrics) && s.gpuIndex === 4)!;
      expect(busy.smPct).toBeGreaterThan(50);
      expect(idle.smPct).toBe(0);
    },
    TEST_MS,
  );
});
