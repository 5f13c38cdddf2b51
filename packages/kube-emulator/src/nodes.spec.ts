/**
 * Against a real kube-apiserver: nodes registered with the GPU Operator's labels and capacity,
 * their Leases and Ready heartbeats, the Kubernetes driver's view of them, dcgm-exporter metrics,
 * and a restart of the emulator that adopts what is there instead of duplicating or wiping it.
 */
import { KubernetesDriver, kubernetesSpecs } from '@gantry/driver';
import type { Emulator } from './emulator';
import { emulatorOn, ensureNamespace, eventually, smallTopology, startCluster, teardown, type Cluster } from './__tests__/harness';
import { EMULATED_NODES_SELECTOR, NODE_LEASE_NAMESPACE } from './cluster/node-objects';

const { GPU_LABELS, TOPOLOGY_LABELS, parseDcgmMetrics, replicaPod } = kubernetesSpecs;

let cluster: Cluster | undefined;
let emulator: Emulator | undefined;
let restarted: Emulator | undefined;

beforeAll(async () => {
  cluster = await startCluster();
  emulator = await emulatorOn(cluster, { topology: smallTopology(2, 8) });
});

afterAll(() => teardown([emulator, restarted], cluster));

describe('node registration', () => {
  it('registers each topology node with GPU feature discovery and topology labels', async () => {
    const nodes = (await cluster!.core.listNode({ labelSelector: EMULATED_NODES_SELECTOR })).items;
    expect(nodes.map((n) => n.metadata?.name).sort()).toEqual(['gpu-node-0', 'gpu-node-1']);
    const labels = nodes[0].metadata!.labels!;
    expect(labels).toMatchObject({
      [GPU_LABELS.product]: 'NVIDIA-H100-80GB-HBM3',
      [GPU_LABELS.count]: '8',
      [GPU_LABELS.memoryMiB]: '81559',
      [GPU_LABELS.migCapable]: 'true',
      [GPU_LABELS.migConfig]: 'all-disabled',
      [GPU_LABELS.migConfigState]: 'success',
      [GPU_LABELS.workloadConfig]: 'container',
      [TOPOLOGY_LABELS.leaf]: 'leaf-t',
      [TOPOLOGY_LABELS.spine]: 'spine-t',
      'example.com/rack': 'r1',
    });
  });

  it('sets capacity and allocatable through the node status, and Ready', async () => {
    const node = await cluster!.core.readNode({ name: 'gpu-node-0' });
    const wantResources = { 'nvidia.com/gpu': '8', 'nvidia.com/gpu.shared': '32', cpu: '128', memory: '1Ti' };
    expect(node.status?.capacity).toMatchObject(wantResources);
    expect(node.status?.allocatable).toMatchObject(wantResources);
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    // the API server's admission tainted it not-ready on create; Ready lifts it
    expect(node.spec?.taints ?? []).toEqual([]);
  });

  it('renews each node Lease in kube-node-lease and posts Ready heartbeats', async () => {
    const first = await cluster!.clients.coordination.readNamespacedLease({ name: 'gpu-node-1', namespace: NODE_LEASE_NAMESPACE });
    expect(first.spec?.holderIdentity).toBe('gpu-node-1');
    const renewed = await eventually('a lease renewal', async () => {
      const lease = await cluster!.clients.coordination.readNamespacedLease({ name: 'gpu-node-1', namespace: NODE_LEASE_NAMESPACE });
      return new Date(lease.spec!.renewTime!).getTime() > new Date(first.spec!.renewTime!).getTime() ? lease : undefined;
    });
    expect(renewed.spec?.leaseDurationSeconds).toBe(40);
    const beat = (await cluster!.core.readNode({ name: 'gpu-node-1' })).status!.conditions!.find((c) => c.type === 'Ready')!.lastHeartbeatTime!;
    await eventually('a newer Ready heartbeat', async () => {
      const now = (await cluster!.core.readNode({ name: 'gpu-node-1' })).status!.conditions!.find((c) => c.type === 'Ready')!.lastHeartbeatTime!;
      return new Date(now).getTime() > new Date(beat).getTime() ? true : undefined;
    });
  });

  it('is what the Kubernetes driver discovers: models, leaves, spines, readiness', async () => {
    const driver = new KubernetesDriver({ kubeconfigPath: cluster!.controlPlane.kubeconfigPath });
    try {
      const inventory = await driver.discover();
      expect(inventory.nodes).toHaveLength(2);
      for (const node of inventory.nodes) {
        expect(node).toMatchObject({ leaf: 'leaf-t', spine: 'spine-t', cpuMilli: 128000, memoryMiB: 1048576, ready: true, persona: 'container' });
        expect(node.gpus.map((g) => g.model)).toEqual(Array(8).fill('H100-80GB'));
      }
    } finally {
      await driver.close();
    }
  });
});

describe('dcgm-exporter metrics', () => {
  it('serves one sample per GPU that the driver parses, busy where a pod runs', async () => {
    await ensureNamespace(cluster!.core, 'gantry');
    const pod = replicaPod({
      request: { jobId: 'metrics-job', kind: 'training', replicas: [{ replica: 0, nodeName: 'gpu-node-0', gpus: [{ index: 2 }] }] },
      replica: { replica: 0, nodeName: 'gpu-node-0', gpus: [{ index: 2 }] },
      namespace: 'gantry',
      defaultImage: 'busybox',
    });
    await cluster!.core.createNamespacedPod({ namespace: 'gantry', body: pod });
    await eventually('the pod running', async () =>
      (await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: pod.metadata!.name! })).status?.phase === 'Running' ? true : undefined,
    );
    const text = await (await fetch(emulator!.metricsUrl!)).text();
    const samples = parseDcgmMetrics(text, Date.now());
    expect(samples).toHaveLength(16);
    const busy = samples.find((s) => s.nodeName === 'gpu-node-0' && s.gpuIndex === 2)!;
    const idle = samples.find((s) => s.nodeName === 'gpu-node-0' && s.gpuIndex === 3)!;
    expect(busy.smPct).toBeGreaterThanOrEqual(90);
    expect(busy.memoryUsedMiB).toBeGreaterThan(60_000);
    expect(busy.powerW).toBeGreaterThan(600);
    expect(idle).toMatchObject({ smPct: 0, memoryUsedMiB: 0, powerW: 70 });
    expect(text).toMatch(
      /DCGM_FI_DEV_GPU_UTIL\{gpu="2",UUID="GPU-[0-9a-f-]+",.*modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-0".*pod="gantry-metrics-job-r0"\}/,
    );
  });
});

describe('restart', () => {
  it('adopts the nodes, their MIG state and running pods: nothing duplicated, nothing reset', async () => {
    await cluster!.core.patchNode(
      { name: 'gpu-node-1', body: { metadata: { labels: { [GPU_LABELS.migConfig]: 'all-1g.10gb', [GPU_LABELS.migConfigState]: null } } } },
      cluster!.clients.mergePatch,
    );
    await eventually('MIG applied', async () =>
      (await cluster!.core.readNode({ name: 'gpu-node-1' })).metadata?.labels?.[GPU_LABELS.migConfigState] === 'success' ? true : undefined,
    );
    const before = await cluster!.core.readNode({ name: 'gpu-node-1' });
    expect(before.status?.capacity?.['nvidia.com/mig-1g.10gb']).toBe('56');
    await emulator!.stop();
    emulator = undefined;
    restarted = await emulatorOn(cluster!, { topology: smallTopology(2, 8) });
    expect(restarted.registration).toMatchObject({ created: 0, adopted: 2 });
    const nodes = (await cluster!.core.listNode({})).items;
    expect(nodes).toHaveLength(2);
    const after = await cluster!.core.readNode({ name: 'gpu-node-1' });
    expect(after.metadata?.uid).toBe(before.metadata?.uid);
    // the MIG layout in force is adopted, not re-applied or reset to the topology's
    expect(after.metadata?.labels?.[GPU_LABELS.migConfigState]).toBe('success');
    expect(after.status?.capacity).toMatchObject({ 'nvidia.com/mig-1g.10gb': '56', 'nvidia.com/gpu': '0' });
    expect(restarted.nodes.get('gpu-node-1')!.gpus.every((g) => g.migLayout.length === 7)).toBe(true);
    // the pod started by the first emulator is still running, and the new one holds its GPU
    const pod = await cluster!.core.readNamespacedPod({ namespace: 'gantry', name: 'gantry-metrics-job-r0' });
    expect(pod.status?.phase).toBe('Running');
    const samples = parseDcgmMetrics(restarted.metricsText(), Date.now());
    expect(samples.find((s) => s.nodeName === 'gpu-node-0' && s.gpuIndex === 2)!.smPct).toBeGreaterThan(0);
    // and it keeps the node alive: the lease is renewed by the new process
    const lease = await cluster!.clients.coordination.readNamespacedLease({ name: 'gpu-node-0', namespace: NODE_LEASE_NAMESPACE });
    await eventually('a lease renewal by the restarted emulator', async () => {
      const now = await cluster!.clients.coordination.readNamespacedLease({ name: 'gpu-node-0', namespace: NODE_LEASE_NAMESPACE });
      return new Date(now.spec!.renewTime!).getTime() > new Date(lease.spec!.renewTime!).getTime() ? true : undefined;
    });
  });
});
