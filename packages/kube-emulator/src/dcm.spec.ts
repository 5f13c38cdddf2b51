/**
 * Against a real kube-apiserver: the Kubernetes driver changes an MI300X's partition mode through
 * the emulator's AMD Device Config Manager the way AMD documents it (a profile in DCM's
 * ConfigMap, the node tainted amd-dcm=up:NoExecute and labelled with the profile, the state label,
 * the device plugin's new amd.com resources), and DCM refuses what AMD's DCM refuses.
 */
import { partitionModeLayoutOf } from '@gantry/contracts';
import { generateTopology, KubernetesDriver, KUBERNETES_DRIVER_DEFAULTS } from '@gantry/driver';
import type { Emulator } from './emulator';
import { emulatorOn, ensureNamespace, eventually, startCluster, teardown, type Cluster } from './__tests__/harness';

const MI = 'MI300X-192GB';
const NODE = 'mi300x-s0-l0-n0';
const DCM = KUBERNETES_DRIVER_DEFAULTS.dcmConfigMap;

let cluster: Cluster | undefined;
let emulator: Emulator | undefined;
let driver: KubernetesDriver | undefined;

beforeAll(async () => {
  cluster = await startCluster();
  const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 1, gpusPerNode: 4, models: [MI] });
  topology.spines[0]!.leaves[0]!.nodes[0]!.name = NODE;
  emulator = await emulatorOn(cluster, { topology });
  await ensureNamespace(cluster.core, 'gantry');
  driver = new KubernetesDriver({ kubeconfigPath: cluster.controlPlane.kubeconfigPath, pollSeconds: 0.1 });
});

afterAll(async () => {
  await driver?.close();
  await teardown([emulator], cluster);
});

const node = () => cluster!.core.readNode({ name: NODE });
const dcmFile = async () => JSON.parse((await cluster!.core.readNamespacedConfigMap({ namespace: DCM.namespace, name: DCM.name })).data!['config.json']!);
const events = async (reason: string) =>
  (await cluster!.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${NODE},reason=${reason}` })).items;

describe('MI300X partition modes through the Device Config Manager', () => {
  it('CPX/NPS4 on GPU 1: a profile skipping the other GPUs, the node labelled, the new partitions advertised, the taint gone; back to SPX', async () => {
    const cpx = partitionModeLayoutOf(MI, 'cpx_nps4')!;
    await driver!.applyMigLayout(NODE, 1, cpx);

    expect((await dcmFile())['gpu-config-profiles']['gantry-g1-cpx-nps4']).toEqual({
      skippedGPUs: { ids: [0, 2, 3] },
      profiles: [{ computePartition: 'CPX', memoryPartition: 'NPS4', numGPUsAssigned: 1 }],
    });
    const after = await node();
    expect(after.metadata?.labels).toMatchObject({ 'dcm.amd.com/gpu-config-profile': 'gantry-g1-cpx-nps4', 'dcm.amd.com/gpu-config-profile-state': 'success' });
    expect(after.status?.capacity).toMatchObject({ 'amd.com/gpu': '3', 'amd.com/cpx_nps4': '8' });
    expect((after.spec?.taints ?? []).map((t) => t.key)).not.toContain('amd-dcm');
    expect(emulator!.nodes.get(NODE)!.gpus[1]!.migLayout).toHaveLength(8);
    const gpus = (await driver!.discover()).nodes.find((n) => n.name === NODE)!.gpus;
    expect(gpus.map((g) => g.migLayout.length)).toEqual([0, 8, 0, 0]);
    expect(await events('SuccessfullyPartitioned')).not.toHaveLength(0);

    await driver!.applyMigLayout(NODE, 1, []);
    const spx = await node();
    expect(spx.status?.capacity?.['amd.com/gpu']).toBe('4');
    expect(Number(spx.status?.capacity?.['amd.com/cpx_nps4'] ?? 0)).toBe(0);
    expect(spx.metadata?.labels?.['amd.com/compute-memory-partition']).toBe('spx_nps1');
  }, 60_000);

  it('refuses while a pod holds the node GPUs (the taint would evict it), naming the pod', async () => {
    await driver!.start({ jobId: 'holds-gpu', kind: 'batch', durationSeconds: 600, replicas: [{ replica: 0, nodeName: NODE, gpus: [{ index: 0 }] }] });
    try {
      await expect(driver!.applyMigLayout(NODE, 2, partitionModeLayoutOf(MI, 'qpx_nps1')!)).rejects.toThrow(
        /cannot change partition mode while pods hold its GPUs \(gantry-holds-gpu-r0\).*amd-dcm=up:NoExecute/,
      );
      expect((await node()).metadata?.labels?.['dcm.amd.com/gpu-config-profile']).not.toMatch(/g2/);
    } finally {
      await driver!.stop('holds-gpu');
      await eventually('the pod gone', async () => ((await cluster!.core.listNamespacedPod({ namespace: 'gantry' })).items.length === 0 ? true : undefined));
    }
  }, 60_000);

  it("DCM refuses a profile AMD's does: QPX with NPS4, and a node not tainted first (state failure, a Warning Event)", async () => {
    const file = await dcmFile();
    file['gpu-config-profiles']['qpx-nps4'] = {
      skippedGPUs: { ids: [1, 2, 3] },
      profiles: [{ computePartition: 'QPX', memoryPartition: 'NPS4', numGPUsAssigned: 1 }],
    };
    const configMap = await cluster!.core.readNamespacedConfigMap({ namespace: DCM.namespace, name: DCM.name });
    await cluster!.core.replaceNamespacedConfigMap({
      namespace: DCM.namespace,
      name: DCM.name,
      body: { ...configMap, data: { 'config.json': JSON.stringify(file) } },
    });
    const label = async (profile: string) =>
      cluster!.clients.core.patchNode(
        { name: NODE, body: { metadata: { labels: { 'dcm.amd.com/gpu-config-profile': profile, 'dcm.amd.com/gpu-config-profile-state': null } } } },
        cluster!.clients.mergePatch,
      );
    await label('qpx-nps4');
    await eventually('state failure', async () => ((await node()).metadata?.labels?.['dcm.amd.com/gpu-config-profile-state'] === 'failure' ? true : undefined));
    const refused = await eventually('the Event', async () => ((await events('InvalidProfileInfo')).length ? await events('InvalidProfileInfo') : undefined));
    expect(refused[0]).toMatchObject({ type: 'Warning' });
    expect(refused[0]!.message).toMatch(/NPS4 on MI300X-192GB allows only CPX \(got QPX\)/);

    // a valid profile, but the node was not tainted: AMD's DCM will not partition it
    await label('gantry-g1-cpx-nps4');
    const untainted = await eventually('the Event', async () =>
      (await events('NodeNotTaintedBeforeParition')).length ? await events('NodeNotTaintedBeforeParition') : undefined,
    );
    expect(untainted[0]!.message).toMatch(/not tainted amd-dcm=up:NoExecute/);
    expect(emulator!.nodes.get(NODE)!.gpus[1]!.migLayout).toEqual([]);
  }, 60_000);
});
