import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { Persona, StartRequest } from '../types';
import {
  cordonPatch,
  cpuMilliOf,
  evictionFor,
  gpuModelFromProduct,
  gpuResourceLimits,
  inventoryNodeFromKubeNode,
  isEvictable,
  jobExitFromPods,
  placedGpuIndexesOf,
  layoutOfNamedConfig,
  memoryMiBOf,
  migApplyProgress,
  migConfigName,
  migConfigPatch,
  migLayoutsOfNode,
  migPartedDevices,
  parseDcgmMetrics,
  personaFromLabels,
  personaPatch,
  personaReady,
  podName,
  replicaPod,
  withMigPartedConfig,
  workloadStatusFromPods,
} from './specs';

function gpuNode(labels: Record<string, string> = {}, extra: Partial<V1Node> = {}): V1Node {
  return {
    metadata: {
      name: 'dgx-01',
      labels: {
        'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
        'nvidia.com/gpu.count': '8',
        'nvidia.com/gpu.memory': '81559',
        'nvidia.com/mig.capable': 'true',
        'fabric.topograph.run/tier-0': 'leaf-7',
        'fabric.topograph.run/tier-1': 'spine-2',
        ...labels,
      },
    },
    spec: {},
    status: {
      allocatable: { cpu: '127500m', memory: '1056478196Ki', 'nvidia.com/gpu': '8' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
    ...extra,
  } as V1Node;
}

const balanced = [
  { profile: '1g.10gb', start: 0 },
  { profile: '1g.10gb', start: 1 },
  { profile: '2g.20gb', start: 2 },
  { profile: '3g.40gb', start: 4 },
];

describe('gpuModelFromProduct', () => {
  it.each([
    { product: 'NVIDIA-H100-80GB-HBM3', wantModel: 'H100-80GB' },
    { product: 'NVIDIA-A100-SXM4-80GB', wantModel: 'A100-80GB' },
    { product: 'NVIDIA-A100-SXM4-40GB', wantModel: 'A100-40GB' },
    { product: 'NVIDIA-A100-80GB-PCIe', wantModel: 'A100-80GB' },
    { product: 'NVIDIA-H200', memoryMiB: 143771, wantModel: 'H200-141GB' },
    { product: 'NVIDIA-H100-80GB-HBM3-MIG-1g.10gb', wantModel: 'H100-80GB' },
    { product: 'NVIDIA-A100-SXM4-40GB-SHARED', wantModel: 'A100-40GB' },
    { product: 'NVIDIA-L40S', wantModel: 'NVIDIA-L40S' },
  ])('reads $product as $wantModel', ({ product, memoryMiB, wantModel }) => {
    expect(gpuModelFromProduct(product, memoryMiB)).toBe(wantModel);
  });
});

describe('quantities', () => {
  it.each([
    { quantity: '128', wantCpuMilli: 128_000 },
    { quantity: '127500m', wantCpuMilli: 127_500 },
    { quantity: '0.5', wantCpuMilli: 500 },
  ])('reads CPU $quantity as $wantCpuMilli millicores', ({ quantity, wantCpuMilli }) => {
    expect(cpuMilliOf(quantity)).toBe(wantCpuMilli);
  });

  it.each([
    { quantity: '1Ti', wantMiB: 1_048_576 },
    { quantity: '1056478196Ki', wantMiB: 1_031_716 },
    { quantity: '512Gi', wantMiB: 524_288 },
    { quantity: '2G', wantMiB: 1907 },
    { quantity: 'lots', wantMiB: 0 },
  ])('reads memory $quantity as $wantMiB MiB', ({ quantity, wantMiB }) => {
    expect(memoryMiBOf(quantity)).toBe(wantMiB);
  });
});

describe('inventoryNodeFromKubeNode', () => {
  it('reads GPUs from discovery labels and the leaf and spine from Topograph tiers', () => {
    const wantNode = {
      name: 'dgx-01',
      leaf: 'leaf-7',
      spine: 'spine-2',
      cpuMilli: 127_500,
      memoryMiB: 1_031_716,
      persona: 'container',
      unschedulable: false,
      ready: true,
    };
    const node = inventoryNodeFromKubeNode(gpuNode())!;
    expect(node).toMatchObject(wantNode);
    expect(node.gpus).toHaveLength(8);
    expect(node.gpus[7]).toEqual({ index: 7, model: 'H100-80GB', memoryMiB: 81559, nvlinkDomain: 0, migCapable: true, migLayout: [], health: 'healthy' });
  });

  it('falls back to the zone and region labels without Topograph', () => {
    const labels = gpuNode().metadata!.labels!;
    delete labels['fabric.topograph.run/tier-0'];
    delete labels['fabric.topograph.run/tier-1'];
    const node = gpuNode({ 'topology.kubernetes.io/zone': 'eu-west-1a', 'topology.kubernetes.io/region': 'eu-west-1' });
    node.metadata!.labels = { ...labels, 'topology.kubernetes.io/zone': 'eu-west-1a', 'topology.kubernetes.io/region': 'eu-west-1' };
    expect(inventoryNodeFromKubeNode(node)).toMatchObject({ leaf: 'eu-west-1a', spine: 'eu-west-1' });
  });

  it('reports cordoned and not-ready nodes', () => {
    const node = gpuNode({}, { spec: { unschedulable: true } });
    node.status!.conditions = [{ type: 'Ready', status: 'Unknown' }];
    expect(inventoryNodeFromKubeNode(node)).toMatchObject({ unschedulable: true, ready: false });
  });

  it('skips a node without GPU discovery labels', () => {
    expect(inventoryNodeFromKubeNode({ metadata: { name: 'cpu-node', labels: {} } })).toBeUndefined();
  });
});

describe('personaFromLabels', () => {
  it.each<{ labels: Record<string, string>; wantPersona: Persona }>([
    { labels: {}, wantPersona: 'container' },
    { labels: { 'nvidia.com/gpu.workload.config': 'vm-passthrough' }, wantPersona: 'vm-passthrough' },
    { labels: { 'nvidia.com/gpu.workload.config': 'vm-vgpu' }, wantPersona: 'vm-passthrough' },
    { labels: { 'nvidia.com/gpu.workload.config': 'container', 'gantry.io/persona': 'inference' }, wantPersona: 'inference' },
  ])('reads $labels as $wantPersona', ({ labels, wantPersona }) => {
    expect(personaFromLabels(labels)).toBe(wantPersona);
  });
});

describe('MIG configs', () => {
  it('names a node layout stably, whatever the order, as a valid label value', () => {
    const name = migConfigName({ 3: balanced, 0: [{ profile: '7g.80gb', start: 0 }] });
    const sameReordered = migConfigName({ 0: [{ profile: '7g.80gb', start: 0 }], 3: [...balanced].reverse(), 5: [] });
    expect(name).toBe(sameReordered);
    expect(name).toMatch(/^gantry-[0-9a-f]{16}$/);
    expect(migConfigName({ 0: [], 1: [] })).toBe('all-disabled');
  });

  it('describes every GPU of the node to mig-parted, grouping equal layouts', () => {
    const wantDevices = [
      { devices: [0, 2], 'mig-enabled': true, 'mig-devices': { '1g.10gb': 2, '2g.20gb': 1, '3g.40gb': 1 } },
      { devices: [1, 3], 'mig-enabled': false },
    ];
    expect(migPartedDevices({ 0: balanced, 2: balanced }, 4)).toEqual(wantDevices);
  });

  it('adds a named config to an existing mig-parted file and keeps the others', () => {
    const existing = { version: 'v1', 'mig-configs': { 'all-1g.10gb': [{ devices: 'all', 'mig-enabled': true, 'mig-devices': { '1g.10gb': 7 } }] } };
    const devices = [{ devices: [0], 'mig-enabled': true, 'mig-devices': { '7g.80gb': 1 } }];
    const merged = withMigPartedConfig(existing, 'gantry-abc', devices);
    expect(Object.keys(merged['mig-configs'])).toEqual(['all-disabled', 'all-1g.10gb', 'gantry-abc']);
    expect(merged['mig-configs']['gantry-abc']).toEqual(devices);
  });

  it.each([
    { model: 'H200-141GB', config: 'all-balanced', wantProfiles: ['1g.18gb', '1g.18gb', '2g.35gb', '3g.71gb'] },
    { model: 'A100-80GB', config: 'all-1g.10gb', wantProfiles: Array(7).fill('1g.10gb') },
    { model: 'A100-80GB', config: 'all-3g.40gb', wantProfiles: ['3g.40gb', '3g.40gb'] },
    { model: 'A100-80GB', config: 'all-disabled', wantProfiles: [] },
  ])('knows the layout of the stock config $config on $model', ({ model, config, wantProfiles }) => {
    expect(layoutOfNamedConfig(model, config)!.map((s) => s.profile)).toEqual(wantProfiles);
  });

  it('reads the annotated layouts while the node runs their config, the stock layout once someone relabels it', () => {
    const annotated = migConfigPatch(migConfigName({ 1: balanced }), { 1: balanced }).metadata!.annotations!;
    const applied = gpuNode({ 'nvidia.com/mig.config': migConfigName({ 1: balanced }) });
    applied.metadata!.annotations = annotated as Record<string, string>;
    expect(migLayoutsOfNode(applied, 'H100-80GB', 2)).toEqual({ 1: balanced });

    const relabelled = gpuNode({ 'nvidia.com/mig.config': 'all-7g.80gb' });
    relabelled.metadata!.annotations = annotated as Record<string, string>;
    const want7g = [{ profile: '7g.80gb', start: 0 }];
    expect(migLayoutsOfNode(relabelled, 'H100-80GB', 2)).toEqual({ 0: want7g, 1: want7g });
  });
});

describe('node patches', () => {
  it('cordons through spec.unschedulable', () => {
    expect(cordonPatch(true)).toEqual({ spec: { unschedulable: true } });
    expect(cordonPatch(false)).toEqual({ spec: { unschedulable: false } });
  });

  it('asks for a MIG config and drops the stale config state', () => {
    const patch = migConfigPatch('gantry-0123', { 0: balanced });
    expect(patch.metadata!.labels).toEqual({ 'nvidia.com/mig.config': 'gantry-0123', 'nvidia.com/mig.config.state': null });
    expect(JSON.parse(patch.metadata!.annotations!['gantry.io/mig-layouts']!)).toEqual({ 0: balanced });
  });

  it.each([
    { persona: 'container', wantWorkloadConfig: 'container' },
    { persona: 'vm-passthrough', wantWorkloadConfig: 'vm-passthrough' },
    { persona: 'inference', wantWorkloadConfig: 'container' },
  ] as const)('labels persona $persona as workload config $wantWorkloadConfig', ({ persona, wantWorkloadConfig }) => {
    expect(personaPatch(persona).metadata!.labels).toEqual({
      'nvidia.com/gpu.workload.config': wantWorkloadConfig,
      'gantry.io/persona': persona,
    });
  });

  it.each<{ labels: Record<string, string>; wantProgress: string }>([
    { labels: { 'nvidia.com/mig.config': 'gantry-1', 'nvidia.com/mig.config.state': 'success' }, wantProgress: 'applied' },
    { labels: { 'nvidia.com/mig.config': 'gantry-1', 'nvidia.com/mig.config.state': 'failed' }, wantProgress: 'failed' },
    { labels: { 'nvidia.com/mig.config': 'gantry-1', 'nvidia.com/mig.config.state': 'rebooting' }, wantProgress: 'waiting' },
    { labels: { 'nvidia.com/mig.config': 'gantry-1' }, wantProgress: 'waiting' },
    { labels: { 'nvidia.com/mig.config': 'all-disabled', 'nvidia.com/mig.config.state': 'success' }, wantProgress: 'waiting' },
  ])('reads mig-manager progress on gantry-1 from $labels as $wantProgress', ({ labels, wantProgress }) => {
    expect(migApplyProgress(gpuNode(labels), 'gantry-1')).toBe(wantProgress);
  });

  it.each<{ name: string; persona: Persona; labels?: Record<string, string>; allocatable: Record<string, string>; wantReady: boolean }>([
    { name: 'a container node with nvidia.com/gpu', persona: 'container', allocatable: { 'nvidia.com/gpu': '8' }, wantReady: true },
    { name: 'a container node with MIG slices', persona: 'inference', allocatable: { 'nvidia.com/mig-1g.10gb': '7' }, wantReady: true },
    { name: 'a container node still without GPUs', persona: 'container', allocatable: { 'nvidia.com/gpu': '0' }, wantReady: false },
    {
      name: 'a VM node with its passthrough device',
      persona: 'vm-passthrough',
      labels: { 'nvidia.com/gpu.workload.config': 'vm-passthrough' },
      allocatable: { 'nvidia.com/GH100_H100_SXM5_80GB': '8' },
      wantReady: true,
    },
    {
      name: 'a VM node still advertising containers GPUs',
      persona: 'vm-passthrough',
      labels: { 'nvidia.com/gpu.workload.config': 'vm-passthrough' },
      allocatable: { 'nvidia.com/gpu': '8' },
      wantReady: false,
    },
    {
      name: 'a VM node whose container GPUs are gone but whose time-sliced shares are not yet',
      persona: 'vm-passthrough',
      labels: { 'nvidia.com/gpu.workload.config': 'vm-passthrough' },
      allocatable: { 'nvidia.com/gpu': '0', 'nvidia.com/gpu.shared': '16' },
      wantReady: false,
    },
    { name: 'a node not yet relabelled', persona: 'vm-passthrough', allocatable: { 'nvidia.com/GH100_H100_SXM5_80GB': '8' }, wantReady: false },
  ])('says $name is ready: $wantReady', ({ persona, labels, allocatable, wantReady }) => {
    const node = gpuNode({ 'nvidia.com/gpu.workload.config': 'container', ...labels });
    node.status!.allocatable = { ...allocatable };
    expect(personaReady(node, persona)).toBe(wantReady);
  });
});

describe('replica pods', () => {
  const request: StartRequest = {
    jobId: 'job-42',
    kind: 'training',
    durationSeconds: 600,
    progressSeconds: 120,
    checkpoint: 'ckpt-7',
    replicas: [
      { replica: 0, nodeName: 'dgx-01', gpus: [{ index: 0 }, { index: 1 }] },
      { replica: 1, nodeName: 'dgx-02', gpus: [{ index: 0, migProfile: '3g.40gb', migStart: 4 }] },
    ],
  };

  it('binds the replica to its node with labels, GPU limits and the remaining work', () => {
    const pod = replicaPod({ request, replica: request.replicas[0], namespace: 'gantry', defaultImage: 'cuda:base' });
    expect(pod.metadata).toMatchObject({
      name: 'gantry-job-42-r0',
      namespace: 'gantry',
      labels: { 'gantry.io/job-id': 'job-42', 'gantry.io/replica': '0' },
      annotations: { 'gantry.io/duration-seconds': '600', 'gantry.io/progress-seconds': '120', 'gantry.io/checkpoint': 'ckpt-7' },
    });
    expect(pod.spec).toMatchObject({ nodeName: 'dgx-01', restartPolicy: 'Never' });
    const container = pod.spec!.containers[0];
    expect(container).toMatchObject({ image: 'cuda:base', command: ['sleep', '480'], resources: { limits: { 'nvidia.com/gpu': '2' } } });
    expect(container.env).toContainEqual({ name: 'GANTRY_CHECKPOINT', value: 'ckpt-7' });
  });

  it.each([
    { name: 'whole GPUs', gpus: [{ index: 0 }, { index: 1 }, { index: 2 }], wantLimits: { 'nvidia.com/gpu': '3' } },
    {
      name: 'MIG slices',
      gpus: [
        { index: 0, migProfile: '1g.10gb' },
        { index: 0, migProfile: '1g.10gb' },
      ],
      wantLimits: { 'nvidia.com/mig-1g.10gb': '2' },
    },
    { name: 'a fractional share', gpus: [{ index: 3, milli: 250 }], wantLimits: { 'nvidia.com/gpu.shared': '1' } },
  ])('asks the device plugin for $name', ({ gpus, wantLimits }) => {
    expect(gpuResourceLimits(gpus)).toEqual(wantLimits);
  });

  it('runs a request image as it is, without the placeholder command', () => {
    const pod = replicaPod({
      request: { ...request, image: 'ghcr.io/acme/train:1' },
      replica: request.replicas[1],
      namespace: 'ns',
      defaultImage: 'cuda:base',
    });
    expect(pod.spec!.containers[0].image).toBe('ghcr.io/acme/train:1');
    expect(pod.spec!.containers[0].command).toBeUndefined();
  });

  it('refuses a job id that cannot be a label value', () => {
    const bad = { ...request, jobId: 'job with spaces' };
    expect(() => replicaPod({ request: bad, replica: bad.replicas[0], namespace: 'ns', defaultImage: 'x' })).toThrow(/not a valid Kubernetes label value/);
  });

  it('names pods as DNS labels, shortening long job ids with a hash', () => {
    expect(podName('Job_ABC', 3)).toBe('gantry-job-abc-r3');
    const long = podName('x'.repeat(80), 12);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^gantry-x+-[0-9a-f]{8}-r12$/);
    expect(podName('y'.repeat(80), 12)).not.toBe(long.replace(/x/g, 'y'));
  });

  it('builds a policy/v1 Eviction for a pod', () => {
    expect(evictionFor({ name: 'p', namespace: 'ns' }, 'policy/v1')).toEqual({
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'p', namespace: 'ns' },
    });
    expect(evictionFor({ name: 'p', namespace: 'ns' }, 'policy/v1beta1')).toMatchObject({ apiVersion: 'policy/v1beta1' });
  });

  it.each([
    { name: 'a workload pod', pod: { metadata: { name: 'w' }, status: { phase: 'Running' } }, wantEvictable: true },
    {
      name: 'a DaemonSet pod',
      pod: { metadata: { name: 'd', ownerReferences: [{ kind: 'DaemonSet', name: 'gpu-operator', apiVersion: 'apps/v1', uid: 'u' }] } },
      wantEvictable: false,
    },
    { name: 'a static (mirror) pod', pod: { metadata: { name: 's', annotations: { 'kubernetes.io/config.mirror': 'abc' } } }, wantEvictable: false },
    { name: 'a finished pod', pod: { metadata: { name: 'f' }, status: { phase: 'Succeeded' } }, wantEvictable: false },
  ])('drains $name: $wantEvictable', ({ pod, wantEvictable }) => {
    expect(isEvictable(pod as V1Pod)).toBe(wantEvictable);
  });
});

describe('workloadStatusFromPods', () => {
  const NOW = Date.parse('2025-01-01T00:10:00Z');
  const annotations = { 'gantry.io/progress-seconds': '10', 'gantry.io/duration-seconds': '600' };
  const running = (startedAt: string): V1Pod => ({
    metadata: { annotations },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'w', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date(startedAt) } } }],
    },
  });
  const terminated = (phase: string, exitCode: number, reason?: string): V1Pod => ({
    metadata: { annotations },
    status: {
      phase,
      reason,
      containerStatuses: [
        {
          name: 'w',
          image: 'i',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, startedAt: new Date('2025-01-01T00:09:00Z'), finishedAt: new Date('2025-01-01T00:09:30Z') } },
        },
      ],
    },
  });

  it.each([
    { name: 'no pods', pods: [], wantStatus: { state: 'unknown', progressSeconds: 0 } },
    {
      name: 'a pending replica',
      pods: [running('2025-01-01T00:09:00Z'), { metadata: { annotations }, status: { phase: 'Pending' } }],
      wantStatus: { state: 'running', progressSeconds: 10, starting: true },
    },
    {
      name: 'replicas running for 60 s and 30 s',
      pods: [running('2025-01-01T00:09:00Z'), running('2025-01-01T00:09:30Z')],
      wantStatus: { state: 'running', progressSeconds: 40 },
    },
    {
      name: 'all replicas succeeded',
      pods: [terminated('Succeeded', 0), terminated('Succeeded', 0)],
      wantStatus: { state: 'exited', progressSeconds: 600, exitCode: 0, reason: 'completed' },
    },
    {
      name: 'one replica killed',
      pods: [running('2025-01-01T00:09:00Z'), terminated('Failed', 137)],
      wantStatus: { state: 'exited', progressSeconds: 40, exitCode: 137, reason: 'failed' },
    },
  ])('reads $name', ({ pods, wantStatus }) => {
    expect(workloadStatusFromPods(pods as V1Pod[], NOW)).toEqual(wantStatus);
  });

  it('tells a process killed by a fatal Xid (its CUDA error, or an Xid condition on its GPU) from a failure', () => {
    const killed = (message: string): V1Pod => ({
      spec: { containers: [{ name: 'workload', env: [{ name: 'GANTRY_GPU_INDEXES', value: '3' }] }] },
      status: {
        phase: 'Failed',
        containerStatuses: [{ name: 'workload', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, message } } }],
      },
    });
    expect(jobExitFromPods([killed('CUDA error: Xid 79 (GPU has fallen off the bus) on GPU 3')])).toEqual({ exitCode: 1, reason: 'gpu-fault' });
    expect(jobExitFromPods([killed('ErrorCode:48 GPU:3 Double Bit ECC Error')])).toEqual({ exitCode: 1, reason: 'gpu-fault' });
    expect(jobExitFromPods([killed('loss went NaN')])).toEqual({ exitCode: 1, reason: 'failed' });
    expect(jobExitFromPods([killed('loss went NaN')], (p) => placedGpuIndexesOf(p).includes(3))).toEqual({ exitCode: 1, reason: 'gpu-fault' });
  });

  it('tells an eviction and a lost node from a failure', () => {
    expect(jobExitFromPods([terminated('Failed', 143, 'Evicted')])).toEqual({ exitCode: 143, reason: 'evicted' });
    expect(jobExitFromPods([terminated('Failed', 137, 'NodeLost')])).toEqual({ exitCode: 137, reason: 'node-lost' });
    expect(jobExitFromPods([{ status: { phase: 'Failed', reason: 'NodeLost' } }])).toEqual({ exitCode: 137, reason: 'node-lost' });
    expect(jobExitFromPods([terminated('Failed', 0)])).toEqual({ exitCode: 1, reason: 'failed' });
    expect(jobExitFromPods([terminated('Failed', 137, 'NodeLost')])).toEqual({ exitCode: 137, reason: 'node-lost' });
  });
});

describe('parseDcgmMetrics', () => {
  it('reads SM utilisation, framebuffer used and power per node and GPU', () => {
    const text = [
      '# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).',
      '# TYPE DCGM_FI_DEV_GPU_UTIL gauge',
      'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="dgx-01"} 97',
      'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",device="nvidia0",Hostname="dgx-01"} 70123',
      'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",device="nvidia0",Hostname="dgx-01"} 612.5',
      'DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-2",device="nvidia1",Hostname="dgx-01"} 0',
      'DCGM_FI_DEV_SM_CLOCK{gpu="0",Hostname="dgx-01"} 1980',
    ].join('\n');
    expect(parseDcgmMetrics(text, 1000)).toEqual([
      { nodeName: 'dgx-01', gpuIndex: 0, at: 1000, smPct: 97, memoryUsedMiB: 70123, powerW: 612.5 },
      { nodeName: 'dgx-01', gpuIndex: 1, at: 1000, smPct: 0, memoryUsedMiB: 0, powerW: 0 },
    ]);
  });
});
