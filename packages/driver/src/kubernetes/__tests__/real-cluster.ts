/**
 * A real API server with what the driver expects around it (test helper): the namespaces, the
 * driver's ServiceAccount and roles created from deploy/kubernetes/rbac.yaml, a token for that
 * ServiceAccount from the TokenRequest API, and GPU nodes as GPU feature discovery labels them.
 * The driver under test talks with that token, never as cluster-admin.
 */
import { startControlPlane, type ControlPlane } from '@gantry/kube-control-plane';
import type { CoreV1Api, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { loadClientNode } from '../kube-api';
import { gpuNodeObject } from './gpu-node';
import { objectsOf } from './manifests';

export const WORKLOAD_NAMESPACE = 'gantry';
export const GPU_OPERATOR_NAMESPACE = 'gpu-operator';
export const DRIVER_SERVICE_ACCOUNT = 'gantry-driver';

export interface RealCluster {
  cp: ControlPlane;
  admin: { config: KubeConfig; core: CoreV1Api; objects: KubernetesObjectApi };
  /** A KubeConfig with the gantry-driver ServiceAccount's token. */
  driverConfig: KubeConfig;
  addGpuNode(name: string, extra?: { labels?: Record<string, string> }): Promise<void>;
  stop(): Promise<void>;
}

export async function startRealCluster(options: { nodes?: string[] } = {}): Promise<RealCluster> {
  const cp = await startControlPlane();
  try {
    const k8s = loadClientNode();
    const config = kubeConfigOf(cp);
    const core = config.makeApiClient(k8s.CoreV1Api);
    const objects = k8s.KubernetesObjectApi.makeApiClient(config);
    for (const object of objectsOf('namespace.yaml')) await objects.create(object);
    for (const name of [GPU_OPERATOR_NAMESPACE, 'default']) {
      // `default` is made by the API server itself, maybe a moment after it reports ready.
      await core.createNamespace({ body: { metadata: { name } } }).catch((err: { code?: number }) => {
        if (err.code !== 409) throw err;
      });
    }
    for (const object of objectsOf('rbac.yaml')) await objects.create(object);
    const tokenRequest = await core.createNamespacedServiceAccountToken({
      name: DRIVER_SERVICE_ACCOUNT,
      namespace: WORKLOAD_NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const driverConfig = kubeConfigOf(cp, tokenRequest.status!.token);
    const addGpuNode = async (name: string, extra: { labels?: Record<string, string> } = {}) => {
      const node = gpuNodeObject({ name, labels: extra.labels });
      const { status, ...withoutStatus } = node;
      await core.createNode({ body: withoutStatus });
      const allocatable = status!.allocatable!;
      await core.patchNodeStatus(
        { name, body: { status: { capacity: allocatable, allocatable, conditions: [readyCondition(true)] } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
      );
    };
    for (const name of options.nodes ?? []) await addGpuNode(name);
    return { cp, admin: { config, core, objects }, driverConfig, addGpuNode, stop: () => cp.stop() };
  } catch (err) {
    await cp.stop();
    throw err;
  }
}

export function readyCondition(ready: boolean) {
  const now = new Date().toISOString();
  return {
    type: 'Ready',
    status: ready ? 'True' : 'False',
    reason: ready ? 'KubeletReady' : 'KubeletNotReady',
    message: ready ? 'kubelet is posting ready status' : 'kubelet stopped posting node status',
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
}

/** A client-node KubeConfig for the control plane, with `token` (default the admin's). */
export function kubeConfigOf(cp: ControlPlane, token?: string): KubeConfig {
  const config = new (loadClientNode().KubeConfig)();
  config.loadFromOptions(cp.kubeConfigOptions(token));
  return config;
}
