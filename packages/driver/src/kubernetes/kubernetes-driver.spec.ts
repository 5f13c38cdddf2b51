import { loadClientNode } from './kube-api';
import { startFakeCluster, FAKE_NODES } from './__tests__/fake-cluster';
import type { FakeKubeApiServer } from './__tests__/fake-kube-api-server';
import type { KubernetesDriver } from './kubernetes-driver';
import { migConfigName } from './mig-config';
import type { DriverEvent } from '../types';

const NODE = FAKE_NODES[0];
const sevenG = [{ profile: '7g.80gb', start: 0 }];

let server: FakeKubeApiServer;
let driver: KubernetesDriver;

async function useFakeCluster(...args: Parameters<typeof startFakeCluster>) {
  ({ server, driver } = await startFakeCluster(...args));
}

afterEach(async () => {
  await driver.close();
  await server.close();
});

async function waitFor(condition: () => boolean, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('KubernetesDriver against a fake API server', () => {
  it('discovers only nodes with GPU discovery labels', async () => {
    await useFakeCluster();
    expect((await driver.discover()).nodes.map((n) => n.name)).toEqual(FAKE_NODES);
  });

  it('sends node changes as JSON merge patches', async () => {
    await useFakeCluster();
    await driver.cordon(NODE);
    const patch = server.requests.find((r) => r.method === 'PATCH');
    expect(patch).toMatchObject({ path: `/api/v1/nodes/${NODE}`, contentType: 'application/merge-patch+json', body: { spec: { unschedulable: true } } });
  });

  it('publishes a named mig-parted config, labels the node with it and waits for mig-manager', async () => {
    await useFakeCluster();
    await driver.applyMigLayout(NODE, 2, sevenG);

    const wantName = migConfigName({ 2: sevenG });
    const node = server.nodes.get(NODE)!;
    expect(node.metadata.labels).toMatchObject({ 'nvidia.com/mig.config': wantName, 'nvidia.com/mig.config.state': 'success' });
    const configFile = server.configMaps.get('gpu-operator/gantry-mig-parted-config')!.data['config.yaml'];
    const config = loadClientNode().loadYaml<{ 'mig-configs': Record<string, unknown> }>(configFile);
    expect(config['mig-configs'][wantName]).toEqual([
      { devices: [0, 1, 3, 4, 5, 6, 7], 'mig-enabled': false },
      { devices: [2], 'mig-enabled': true, 'mig-devices': { '7g.80gb': 1 } },
    ]);
    expect(config['mig-configs']['all-disabled']).toBeDefined();
  });

  it('keeps the layouts of the other GPUs when one GPU changes', async () => {
    await useFakeCluster();
    await driver.applyMigLayout(NODE, 0, sevenG);
    await driver.applyMigLayout(NODE, 1, sevenG);
    const gpus = (await driver.discover()).nodes.find((n) => n.name === NODE)!.gpus;
    expect(gpus.map((g) => g.migLayout.length)).toEqual([1, 1, 0, 0, 0, 0, 0, 0]);
  });

  it('fails when mig-manager reports the config as failed', async () => {
    await useFakeCluster({ failingMigConfigs: [migConfigName({ 0: sevenG })] });
    await expect(driver.applyMigLayout(NODE, 0, sevenG)).rejects.toThrow(/nvidia.com\/mig.config.state=failed/);
  });

  it('gives up waiting for mig-manager after the timeout', async () => {
    await useFakeCluster({ migManagerDelayMs: 60_000 }, { migApplyTimeoutSeconds: 0.1 });
    await expect(driver.applyMigLayout(NODE, 0, sevenG)).rejects.toThrow(/timed out after 0.1 s waiting for MIG config/);
  });

  it('creates one pod per replica, bound to its node, asking for its GPUs', async () => {
    await useFakeCluster();
    await driver.start({
      jobId: 'gang',
      kind: 'training',
      replicas: [
        { replica: 0, nodeName: FAKE_NODES[0], gpus: [{ index: 0 }, { index: 1 }] },
        { replica: 1, nodeName: FAKE_NODES[1], gpus: [{ index: 0 }, { index: 1 }] },
      ],
    });
    const pods = [...server.pods.values()];
    expect(pods.map((p) => [p.metadata.name, p.spec.nodeName, p.spec.containers[0].resources.limits])).toEqual([
      ['gantry-gang-r0', FAKE_NODES[0], { 'nvidia.com/gpu': '2' }],
      ['gantry-gang-r1', FAKE_NODES[1], { 'nvidia.com/gpu': '2' }],
    ]);
  });

  it('drains through the Eviction API and leaves DaemonSet pods alone', async () => {
    await useFakeCluster();
    server.pods.set('gpu-operator/dcgm-exporter-x', {
      metadata: {
        name: 'dcgm-exporter-x',
        namespace: 'gpu-operator',
        ownerReferences: [{ kind: 'DaemonSet', name: 'dcgm-exporter', apiVersion: 'apps/v1', uid: 'd' }],
      },
      spec: { nodeName: NODE },
      status: { phase: 'Running' },
    });
    await driver.start({ jobId: 'victim', kind: 'batch', replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0 }] }] });
    await driver.drain(NODE);

    const evictions = server.requests.filter((r) => r.path.endsWith('/eviction')).map((r) => r.path);
    expect(evictions).toEqual(['/api/v1/namespaces/gantry/pods/gantry-victim-r0/eviction']);
    expect([...server.pods.keys()]).toEqual(['gpu-operator/dcgm-exporter-x']);
  });

  it('emits node-down and node-up when a GPU node’s Ready condition flips', async () => {
    await useFakeCluster();
    const events: DriverEvent[] = [];
    driver.onEvent((e) => events.push(e));
    await driver.watches!.synced(); // the first list is the state the driver starts from
    server.setNodeReady(NODE, false);
    await waitFor(() => events.some((e) => e.type === 'node-down'));
    server.setNodeReady(NODE, true);
    await waitFor(() => events.some((e) => e.type === 'node-up'));

    expect(events.map((e) => [e.type, 'nodeName' in e ? e.nodeName : undefined])).toEqual([
      ['node-down', NODE],
      ['node-up', NODE],
    ]);
  });

  it('reads GPU telemetry from dcgm-exporter', async () => {
    await useFakeCluster({}, (url) => ({ dcgmMetricsUrl: `${url}/metrics` }));
    server.dcgmMetricsText = 'DCGM_FI_DEV_GPU_UTIL{gpu="3",Hostname="gpu-node-a"} 88\n';
    expect(await driver.metrics()).toEqual([expect.objectContaining({ nodeName: 'gpu-node-a', gpuIndex: 3, smPct: 88 })]);
  });
});
