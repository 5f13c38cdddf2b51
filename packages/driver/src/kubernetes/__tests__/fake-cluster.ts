/** A KubernetesDriver wired to a FakeKubeApiServer with two H100 nodes (test helper). */
import { loadClientNode } from '../kube-api';
import { KubernetesDriver, type KubernetesDriverOptions } from '../kubernetes-driver';
import { FakeKubeApiServer, fakeGpuNode, type FakeKubeApiOptions } from './fake-kube-api-server';

export const FAKE_NODES = ['gpu-node-a', 'gpu-node-b'];

export async function startFakeCluster(
  fakeOptions: FakeKubeApiOptions = {},
  driverOptions: KubernetesDriverOptions | ((url: string) => KubernetesDriverOptions) = {},
) {
  const server = new FakeKubeApiServer(fakeOptions);
  for (const name of FAKE_NODES) server.addNode(fakeGpuNode({ name }));
  server.addNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'cpu-only', labels: {} }, spec: {}, status: {} });
  const url = await server.listen();
  const kubeConfig = new (loadClientNode().KubeConfig)();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
    users: [{ name: 'fake', token: 'fake-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  const extra = typeof driverOptions === 'function' ? driverOptions(url) : driverOptions;
  const driver = new KubernetesDriver({ kubeConfig, pollSeconds: 0.01, ...extra });
  return { server, driver, url };
}
