/**
 * The few Kubernetes API calls the driver makes, over @kubernetes/client-node 1.x. The library
 * is ES-module only; it is required lazily (Node >= 20.19 loads it with require(esm)) so that
 * importing @gantry/driver costs nothing for processes that run the simulated driver.
 */
import type * as K8s from '@kubernetes/client-node';
import type { NodePatch } from './node-patches';

export type ClientNode = typeof K8s;

export function loadClientNode(): ClientNode {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES-module package, loaded on demand through require(esm)
  return require('@kubernetes/client-node') as ClientNode;
}

/** A KubeConfig from a kubeconfig file, or the default chain (KUBECONFIG, in-cluster, ~/.kube/config). */
export function loadKubeConfig(path?: string): K8s.KubeConfig {
  const config = new (loadClientNode().KubeConfig)();
  if (path) config.loadFromFile(path);
  else config.loadFromDefault();
  return config;
}

export function httpStatusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

export class KubeApi {
  private readonly core: K8s.CoreV1Api;
  private readonly mergePatch: K8s.ConfigurationOptions;

  constructor(config: K8s.KubeConfig) {
    const k8s = loadClientNode();
    this.core = config.makeApiClient(k8s.CoreV1Api);
    this.mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  }

  async listNodes(labelSelector?: string): Promise<K8s.V1Node[]> {
    return (await this.core.listNode({ labelSelector })).items;
  }

  readNode(name: string): Promise<K8s.V1Node> {
    return this.core.readNode({ name });
  }

  patchNode(name: string, patch: NodePatch): Promise<K8s.V1Node> {
    return this.core.patchNode({ name, body: patch }, this.mergePatch);
  }

  async listPods(namespace: string, labelSelector: string): Promise<K8s.V1Pod[]> {
    return (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  async listPodsOnNode(nodeName: string): Promise<K8s.V1Pod[]> {
    return (await this.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })).items;
  }

  createPod(pod: K8s.V1Pod): Promise<K8s.V1Pod> {
    return this.core.createNamespacedPod({ namespace: pod.metadata!.namespace!, body: pod });
  }

  /** Deletes a pod; false when it was already gone. */
  async deletePod(namespace: string, name: string): Promise<boolean> {
    return this.ignoringNotFound(() => this.core.deleteNamespacedPod({ namespace, name }));
  }

  /** Evicts a pod through the Eviction API; false when it was already gone. */
  async evictPod(eviction: K8s.V1Eviction): Promise<boolean> {
    const { name, namespace } = eviction.metadata as { name: string; namespace: string };
    return this.ignoringNotFound(() => this.core.createNamespacedPodEviction({ name, namespace, body: eviction }));
  }

  async readConfigMap(namespace: string, name: string): Promise<K8s.V1ConfigMap | undefined> {
    try {
      return await this.core.readNamespacedConfigMap({ namespace, name });
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Creates the ConfigMap, or replaces it when `existing` says it is there. */
  async writeConfigMap(configMap: K8s.V1ConfigMap, existing: boolean): Promise<void> {
    const { namespace, name } = configMap.metadata as { namespace: string; name: string };
    if (existing) await this.core.replaceNamespacedConfigMap({ namespace, name, body: configMap });
    else await this.core.createNamespacedConfigMap({ namespace, body: configMap });
  }

  private async ignoringNotFound(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) return false;
      throw err;
    }
  }
}
