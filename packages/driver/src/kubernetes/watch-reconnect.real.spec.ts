/**
 * Watches against a real kube-apiserver when things go wrong: a resourceVersion the server no
 * longer holds (410 Gone -> relist), and the API server restarting under a running driver
 * (reconnect, reconcile: nothing lost, nothing reported or started twice).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { DriverEvent } from '../types';
import { Informer, type Delta } from './informer';
import { KubeApi } from './kube-api';
import { KubernetesDriver } from './kubernetes-driver';
import { podName } from './pods';
import { readyCondition, startRealCluster, WORKLOAD_NAMESPACE, type RealCluster } from './__tests__/real-cluster';
import { TestKubelet } from './__tests__/test-kubelet';
import { pause, waitFor } from './__tests__/wait-for';
import { loadClientNode } from './kube-api';

const HOOK_MS = 240_000; // a control plane: up to 100 s on a busy machine, and the RBAC objects
const mergePatch = () => loadClientNode().setHeaderOptions('Content-Type', 'application/merge-patch+json');
const TEST_MS = 90_000;

let cluster: RealCluster;

beforeAll(async () => {
  cluster = await startRealCluster({ nodes: ['gpu-a', 'gpu-b'] });
}, HOOK_MS);

afterAll(async () => {
  await cluster?.stop();
}, HOOK_MS);

describe('watches on a real API server', () => {
  it(
    'relists after 410 Gone (the API server restarted past its resourceVersion) and delivers what changed, once',
    async () => {
      const deltas: Delta<V1Node>[] = [];
      const informer = new Informer<V1Node>({
        what: 'nodes',
        source: new KubeApi(cluster.admin.config).nodeInformerSource(),
        onDelta: (d) => deltas.push(d),
        backoff: { initialMs: 50, maxMs: 500 },
        warn: () => undefined,
      });
      informer.start();
      try {
        await informer.synced();
        expect(deltas.map((d) => [d.type, d.object.metadata?.name, d.initial])).toEqual([
          ['ADDED', 'gpu-a', true],
          ['ADDED', 'gpu-b', true],
        ]);
        const listedAt = Number(informer.resourceVersion);
        // Another object changes (etcd's revision moves past the informer's), then the API server
        // restarts: its new watch cache starts after the informer's version, which is now too old.
        await cluster.admin.core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'moves-the-revision' } } });
        await cluster.cp.stopApiServer();
        await cluster.cp.startApiServer();
        await cluster.addGpuNode('late');
        await waitFor('the new node', () => informer.get(undefined, 'late') !== undefined, 30_000);
        expect(informer.stats.gone).toBeGreaterThanOrEqual(1);
        expect(informer.stats.lists).toBeGreaterThanOrEqual(2);
        expect(Number(informer.resourceVersion)).toBeGreaterThan(listedAt);
        await cluster.admin.core.patchNode({ name: 'late', body: { metadata: { labels: { touched: 'yes' } } } }, mergePatch());
        await waitFor('the label', () => informer.get(undefined, 'late')?.metadata?.labels?.touched === 'yes');
        expect(deltas.filter((d) => d.object.metadata?.name === 'late' && d.type === 'ADDED')).toHaveLength(1);
        expect(deltas.filter((d) => d.object.metadata?.name !== 'late')).toHaveLength(2); // unchanged: not delivered again
      } finally {
        await informer.stop();
      }
    },
    TEST_MS,
  );

  it(
    'survives an API server restart mid-run: reconnects and reconciles, nothing lost, nothing twice',
    async () => {
      const kubelet = new TestKubelet(cluster.admin.config, WORKLOAD_NAMESPACE);
      await kubelet.start();
      const driver = new KubernetesDriver({
        kubeConfig: cluster.driverConfig,
        pollSeconds: 0.05,
        apiRetrySeconds: 60,
        watchBackoff: { initialMs: 100, maxMs: 1000 },
      });
      const events: DriverEvent[] = [];
      driver.onEvent((e) => events.push(e));
      try {
        await driver.watches!.synced();
        const replicas = (nodeName: string) => [{ replica: 0, nodeName, gpus: [{ index: 0 }] }];
        await driver.start({ jobId: 'before', kind: 'batch', replicas: replicas('gpu-a') });
        const phase = async (jobId: string) =>
          (await cluster.admin.core.readNamespacedPod({ namespace: WORKLOAD_NAMESPACE, name: podName(jobId, 0) }).catch(() => undefined))?.status?.phase;
        await waitFor('the first job to run', async () => (await phase('before')) === 'Running');
        const watchesBefore = driver.watches!.stats.pods.watches;

        await cluster.cp.stopApiServer();
        // Called while the API server is away: it retries until the server is back.
        const startedDuringOutage = driver.start({ jobId: 'during', kind: 'batch', replicas: replicas('gpu-b') });
        await pause(500);
        await cluster.cp.startApiServer();
        // Changes right after the restart, likely before the driver's watches are back.
        await kubelet.finish(podName('before', 0), 0);
        await cluster.admin.core.patchNodeStatus(
          { name: 'gpu-b', body: { status: { conditions: [readyCondition(false)] } } },
          loadClientNode().setHeaderOptions('Content-Type', 'application/strategic-merge-patch+json'),
        );
        await startedDuringOutage;

        await waitFor('the exit of the first job', () => events.some((e) => e.type === 'job-exited' && e.jobId === 'before'), 30_000);
        await waitFor('node-down of gpu-b', () => events.some((e) => e.type === 'node-down' && e.nodeName === 'gpu-b'), 30_000);
        await waitFor('the second job to run', async () => (await phase('during')) === 'Running', 30_000);
        await pause(500);
        expect(events.filter((e) => e.type === 'job-exited')).toEqual([expect.objectContaining({ jobId: 'before', exitCode: 0 })]);
        expect(events.filter((e) => e.type === 'node-down')).toEqual([expect.objectContaining({ nodeName: 'gpu-b' })]);
        const pods = await cluster.admin.core.listNamespacedPod({ namespace: WORKLOAD_NAMESPACE, labelSelector: 'gantry.io/job-id=during' });
        expect(pods.items).toHaveLength(1);
        expect(driver.watches!.stats.pods.watches).toBeGreaterThan(watchesBefore);
      } finally {
        await driver.close();
        await kubelet.stop();
      }
    },
    TEST_MS,
  );
});
