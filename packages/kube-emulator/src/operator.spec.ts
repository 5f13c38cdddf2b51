/**
 * Against a real kube-apiserver: the emulated GPU Operator answers the Kubernetes driver. MIG
 * configs are applied (capacity per profile) or fail (unknown config, illegal layout for the
 * geometry, a GPU in use); persona switches swap the node's GPU resources.
 */
import { KubernetesDriver, KUBERNETES_DRIVER_DEFAULTS, kubernetesSpecs } from '@gantry/driver';
import type { Emulator } from './emulator';
import { emulatorOn, ensureNamespace, eventually, smallTopology, startCluster, teardown, type Cluster } from './__tests__/harness';

const { GPU_LABELS, replicaPod } = kubernetesSpecs;

let cluster: Cluster | undefined;
let emulator: Emulator | undefined;
let driver: KubernetesDriver | undefined;

beforeAll(async () => {
  cluster = await startCluster();
  // a persona switch long enough (2 s) for the test to see the node without GPU resources meanwhile
  emulator = await emulatorOn(cluster, { topology: smallTopology(3, 8), delays: { migApplySeconds: 0.3, personaSwitchSeconds: 2 } });
  driver = new KubernetesDriver({
    kubeconfigPath: cluster.controlPlane.kubeconfigPath,
    pollSeconds: 0.1,
    migApplyTimeoutSeconds: 20,
    personaTimeoutSeconds: 20,
  });
  await ensureNamespace(cluster.core, 'gantry');
});

afterAll(async () => {
  await driver?.close();
  await teardown([emulator], cluster);
});

const capacityOf = async (name: string) => (await cluster!.core.readNode({ name })).status!.capacity!;
const labelsOf = async (name: string) => (await cluster!.core.readNode({ name })).metadata!.labels!;

describe('mig-manager', () => {
  it('applies the layout the driver asks for and advertises its slices', async () => {
    const layout = [
      { profile: '3g.40gb', start: 4 },
      { profile: '2g.20gb', start: 0 },
      { profile: '1g.10gb', start: 2 },
      { profile: '1g.10gb', start: 3 },
    ];
    await driver!.applyMigLayout('gpu-node-0', 1, layout);
    const labels = await labelsOf('gpu-node-0');
    expect(labels[GPU_LABELS.migConfig]).toMatch(/^gantry-[0-9a-f]{16}$/);
    expect(labels[GPU_LABELS.migConfigState]).toBe('success');
    expect(await capacityOf('gpu-node-0')).toMatchObject({
      'nvidia.com/gpu': '7',
      'nvidia.com/mig-3g.40gb': '1',
      'nvidia.com/mig-2g.20gb': '1',
      'nvidia.com/mig-1g.10gb': '2',
    });
    const inventory = await driver!.discover();
    const gpu = inventory.nodes.find((n) => n.name === 'gpu-node-0')!.gpus[1];
    expect([...gpu.migLayout].sort((a, b) => a.start - b.start)).toEqual([...layout].sort((a, b) => a.start - b.start));
    expect(emulator!.nodes.get('gpu-node-0')!.gpus[1].migLayout).toHaveLength(4);
  });

  it('goes back to whole GPUs: the slices drop to 0, as the kubelet keeps a resource it advertised', async () => {
    await driver!.applyMigLayout('gpu-node-0', 1, []);
    expect(await capacityOf('gpu-node-0')).toMatchObject({ 'nvidia.com/gpu': '8', 'nvidia.com/mig-3g.40gb': '0', 'nvidia.com/mig-1g.10gb': '0' });
    expect((await labelsOf('gpu-node-0'))[GPU_LABELS.migConfig]).toBe('all-disabled');
  });

  it('applies a stock config named on the label (all-balanced)', async () => {
    await cluster!.core.patchNode(
      { name: 'gpu-node-2', body: { metadata: { labels: { [GPU_LABELS.migConfig]: 'all-balanced', [GPU_LABELS.migConfigState]: null } } } },
      cluster!.clients.mergePatch,
    );
    await eventually('success', async () => ((await labelsOf('gpu-node-2'))[GPU_LABELS.migConfigState] === 'success' ? true : undefined));
    expect(await capacityOf('gpu-node-2')).toMatchObject({
      'nvidia.com/gpu': '0',
      'nvidia.com/mig-1g.10gb': '16',
      'nvidia.com/mig-2g.20gb': '8',
      'nvidia.com/mig-3g.40gb': '8',
    });
  });

  it.each([
    ['an unknown config', 'all-9g.99gb', undefined],
    ['a layout the geometry forbids (three 3g on one GPU)', 'too-many-3g', { '3g.40gb': 3 }],
    ['a 7g beside a 1g', 'seven-and-one', { '7g.80gb': 1, '1g.10gb': 1 }],
  ])('reports failed for %s', async (_what, config, migDevices) => {
    if (migDevices) {
      const { namespace, name, key } = KUBERNETES_DRIVER_DEFAULTS.migPartedConfigMap;
      const file = { version: 'v1', 'mig-configs': { [config]: [{ devices: 'all', 'mig-enabled': true, 'mig-devices': migDevices }] } };
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { [key]: cluster!.clients.k8s.dumpYaml(file) } };
      try {
        await cluster!.core.createNamespacedConfigMap({ namespace, body });
      } catch {
        await cluster!.core.replaceNamespacedConfigMap({ namespace, name, body });
      }
    }
    const before = await capacityOf('gpu-node-1');
    await cluster!.core.patchNode(
      { name: 'gpu-node-1', body: { metadata: { labels: { [GPU_LABELS.migConfig]: config, [GPU_LABELS.migConfigState]: null } } } },
      cluster!.clients.mergePatch,
    );
    await eventually('failed', async () => ((await labelsOf('gpu-node-1'))[GPU_LABELS.migConfigState] === 'failed' ? true : undefined));
    expect(await capacityOf('gpu-node-1')).toEqual(before);
  });

  it('refuses to re-partition a GPU a pod is running on (the driver sees failed)', async () => {
    const replica = { replica: 0, nodeName: 'gpu-node-0', gpus: [{ index: 3 }] };
    const body = replicaPod({ request: { jobId: 'busy', kind: 'training', replicas: [replica] }, replica, namespace: 'gantry', defaultImage: 'busybox' });
    await cluster!.core.createNamespacedPod({ namespace: 'gantry', body });
    await eventually('running', async () =>
      (await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: 'gantry-busy-r0' })).status?.phase === 'Running' ? true : undefined,
    );
    await expect(driver!.applyMigLayout('gpu-node-0', 3, [{ profile: '7g.80gb', start: 0 }])).rejects.toThrow(/failed/);
    expect(emulator!.nodes.get('gpu-node-0')!.gpus[3].migLayout).toEqual([]);
  });
});

describe('persona switch', () => {
  it('swaps the node to VM passthrough and back through nvidia.com/gpu.workload.config', async () => {
    const switching = driver!.setPersona('gpu-node-1', 'vm-passthrough');
    await eventually('GPU resources torn down', async () => ((await capacityOf('gpu-node-1'))['nvidia.com/gpu'] === '0' ? true : undefined));
    await switching;
    expect(await capacityOf('gpu-node-1')).toMatchObject({ 'nvidia.com/GH100_H100_SXM5_80GB': '8', 'nvidia.com/gpu': '0' });
    await driver!.setPersona('gpu-node-1', 'container');
    expect(await capacityOf('gpu-node-1')).toMatchObject({ 'nvidia.com/GH100_H100_SXM5_80GB': '0', 'nvidia.com/gpu': '8' });
  });
});
