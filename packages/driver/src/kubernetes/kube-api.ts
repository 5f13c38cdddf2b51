/**
 * The Kubernetes API calls the driver makes, over @kubernetes/client-node 1.x, and nothing else
 * (the RBAC rules in deploy/kubernetes/rbac.yaml grant exactly these; the README lists them).
 * Every call survives an API server restart: transient failures are retried with backoff for
 * `retryTimeoutMs`. The library is ES-module only; it is required lazily (Node >= 20.19 loads it
 * with require(esm)) so that importing @gantry/driver costs nothing for the simulated driver.
 */
import type * as K8s from '@kubernetes/client-node';
import type { InformerSource, ListResult } from './informer';
import type { NodePatch } from './node-patches';
import { kubeJsonRequest } from './json-request';
import { evictionFor } from './pods';
import { httpStatusOf, withTransientRetry } from './retry';

export { httpStatusOf } from './retry';

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

/** The Eviction API version the server serves: `policy/v1` from Kubernetes 1.22, `policy/v1beta1` before. */
export type EvictionApiVersion = 'policy/v1' | 'policy/v1beta1';

/** Field selector of the core/v1 Events about nodes (the health source reads them). */
export const NODE_EVENTS_FIELD_SELECTOR = 'involvedObject.kind=Node';

/** Pods that still hold resources (the capacity check counts them). */
const ACTIVE_PODS_FIELD_SELECTOR = 'status.phase!=Succeeded,status.phase!=Failed';

export interface KubeApiOptions {
  /** How long a call retries while the API server is unreachable or answers 5xx. Default 30 s. */
  retryTimeoutMs?: number;
  isClosed?: () => boolean;
}

/** Plain JSON as the API server sends it (the generated client turns timestamps into Dates). */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export class KubeApi {
  private readonly core: K8s.CoreV1Api;
  private readonly watcher: K8s.Watch;
  private readonly mergePatch: K8s.ConfigurationOptions;
  private evictionVersion?: Promise<EvictionApiVersion>;

  constructor(
    private readonly config: K8s.KubeConfig,
    private readonly options: KubeApiOptions = {},
  ) {
    const k8s = loadClientNode();
    this.core = config.makeApiClient(k8s.CoreV1Api);
    this.watcher = new k8s.Watch(config);
    this.mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
  }

  async listNodes(labelSelector?: string): Promise<K8s.V1Node[]> {
    return plain((await this.retrying(() => this.core.listNode({ labelSelector }))).items);
  }

  async readNode(name: string): Promise<K8s.V1Node> {
    return plain(await this.retrying(() => this.core.readNode({ name })));
  }

  /**
   * A JSON merge patch (`application/merge-patch+json`) of a node: only the keys in the patch
   * change, so other writers' labels and annotations survive. With `resourceVersion` the patch
   * carries it as a precondition: the server answers 409 if the node changed since it was read.
   */
  async patchNode(name: string, patch: NodePatch, resourceVersion?: string): Promise<K8s.V1Node> {
    const body = resourceVersion === undefined ? patch : { ...patch, metadata: { ...patch.metadata, resourceVersion } };
    return plain(await this.retrying(() => this.core.patchNode({ name, body }, this.mergePatch)));
  }

  /**
   * Pods by label, read from etcd: for a label selector etcd reads every pod of the namespace, so
   * with `fromWatchCache` the API server answers from its watch cache instead (`resourceVersion=0`:
   * milliseconds behind etcd, nothing read from it), for the reads that run per job and often.
   */
  async listPods(namespace: string, labelSelector: string, fromWatchCache = false): Promise<K8s.V1Pod[]> {
    const resourceVersion = fromWatchCache ? '0' : undefined;
    return plain((await this.retrying(() => this.core.listNamespacedPod({ namespace, labelSelector, resourceVersion }))).items);
  }

  async listPodsOnNode(nodeName: string): Promise<K8s.V1Pod[]> {
    return plain((await this.retrying(() => this.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` }))).items);
  }

  /** Every pod in the cluster that is not finished (Pending, Running, Unknown). */
  async listActivePods(): Promise<K8s.V1Pod[]> {
    return plain((await this.retrying(() => this.core.listPodForAllNamespaces({ fieldSelector: ACTIVE_PODS_FIELD_SELECTOR }))).items);
  }

  /**
   * A pod's log with RFC 3339 timestamps. The API server reads it from the node's kubelet
   * (`/containerLogs/...` on the kubelet port): without a kubelet that answers, this fails.
   */
  async readPodLog(namespace: string, name: string, options: { sinceSeconds?: number; tailLines?: number }): Promise<string> {
    return this.core.readNamespacedPodLog({ namespace, name, timestamps: true, ...options });
  }

  /**
   * Creates a pod; false when a pod of that name already exists (a retried or concurrent create).
   * Plain JSON (kubeJsonRequest): a start sends the pod it built and needs nothing of the answer,
   * which the typed client would walk field by field, a whole Pod per start.
   */
  async createPod(pod: K8s.V1Pod): Promise<boolean> {
    const path = `/api/v1/namespaces/${encodeURIComponent(pod.metadata!.namespace!)}/pods`;
    try {
      await this.retrying(() => kubeJsonRequest(this.config, { method: 'POST', path, body: pod }, false));
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 409) return false;
      throw err;
    }
  }

  /** Deletes a pod; false when it was already gone. */
  async deletePod(namespace: string, name: string): Promise<boolean> {
    return this.ignoringNotFound(() => this.core.deleteNamespacedPod({ namespace, name }));
  }

  /**
   * Evicts a pod through the Eviction API, in the version the server serves; false when the pod
   * was already gone. A PodDisruptionBudget's refusal (429) is thrown for the caller to retry.
   */
  async evictPod(pod: { name: string; namespace: string }): Promise<boolean> {
    const apiVersion = await this.evictionApiVersion();
    const body = evictionFor(pod, apiVersion);
    return this.ignoringNotFound(() => this.core.createNamespacedPodEviction({ name: pod.name, namespace: pod.namespace, body }));
  }

  /**
   * Discovery, once per driver: the group/version of the `pods/eviction` subresource in the core
   * API's resource list (`policy/v1` from 1.22; `policy/v1beta1` on 1.20 and 1.21).
   */
  evictionApiVersion(): Promise<EvictionApiVersion> {
    this.evictionVersion ??= this.retrying(() => this.core.getAPIResources()).then(
      (list) => {
        const eviction = list.resources.find((r) => r.name === 'pods/eviction');
        return eviction?.group === 'policy' && eviction.version === 'v1' ? 'policy/v1' : 'policy/v1beta1';
      },
      (err: unknown) => {
        this.evictionVersion = undefined; // ask again next time
        throw err;
      },
    );
    return this.evictionVersion;
  }

  async readConfigMap(namespace: string, name: string): Promise<K8s.V1ConfigMap | undefined> {
    try {
      return plain(await this.retrying(() => this.core.readNamespacedConfigMap({ namespace, name })));
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** Creates a ConfigMap; 409 when another writer created it first. */
  async createConfigMap(configMap: K8s.V1ConfigMap): Promise<void> {
    await this.retrying(() => this.core.createNamespacedConfigMap({ namespace: configMap.metadata!.namespace!, body: configMap }));
  }

  /** Replaces a ConfigMap; its `metadata.resourceVersion` is the precondition (409 if it changed since). */
  async replaceConfigMap(configMap: K8s.V1ConfigMap): Promise<void> {
    if (!configMap.metadata?.resourceVersion) throw new Error('replaceConfigMap needs the resourceVersion it read');
    const { namespace, name } = configMap.metadata as { namespace: string; name: string };
    await this.retrying(() => this.core.replaceNamespacedConfigMap({ namespace, name, body: configMap }));
  }

  /** List + watch of Gantry's pods in one namespace. */
  podInformerSource(namespace: string, labelSelector: string): InformerSource<K8s.V1Pod> {
    return this.informerSource(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, { labelSelector }, async () =>
      this.core.listNamespacedPod({ namespace, labelSelector }),
    );
  }

  /**
   * List + watch of unfinished pods in every namespace (a pod that finishes leaves it: DELETED),
   * narrowed by `labelSelector`, and to the namespaces other than `notInNamespace` when given.
   */
  activePodInformerSource(selectors: { labelSelector?: string; notInNamespace?: string } = {}): InformerSource<K8s.V1Pod> {
    const { labelSelector, notInNamespace } = selectors;
    const fieldSelector = notInNamespace ? `${ACTIVE_PODS_FIELD_SELECTOR},metadata.namespace!=${notInNamespace}` : ACTIVE_PODS_FIELD_SELECTOR;
    return this.informerSource('/api/v1/pods', { labelSelector, fieldSelector }, async () =>
      this.core.listPodForAllNamespaces({ fieldSelector, labelSelector }),
    );
  }

  nodeInformerSource(labelSelector?: string): InformerSource<K8s.V1Node> {
    return this.informerSource('/api/v1/nodes', { labelSelector }, async () => this.core.listNode({ labelSelector }));
  }

  /** Events about nodes, in every namespace. */
  nodeEventInformerSource(): InformerSource<K8s.CoreV1Event> {
    const fieldSelector = NODE_EVENTS_FIELD_SELECTOR;
    return this.informerSource('/api/v1/events', { fieldSelector }, async () => this.core.listEventForAllNamespaces({ fieldSelector }));
  }

  private informerSource<T>(
    path: string,
    selectors: { labelSelector?: string; fieldSelector?: string },
    list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
  ): InformerSource<T> {
    return {
      list: async (): Promise<ListResult<T>> => {
        const result = await list();
        return { items: plain(result.items), resourceVersion: result.metadata?.resourceVersion ?? '' };
      },
      watch: async (resourceVersion, timeoutSeconds, onEvent, onDone) => {
        const query = { ...selectors, resourceVersion, allowWatchBookmarks: true, timeoutSeconds };
        const controller = await this.watcher.watch(path, query, (type, object) => onEvent(type, object), onDone);
        return () => controller.abort();
      },
    };
  }

  private retrying<T>(call: () => Promise<T>): Promise<T> {
    return withTransientRetry(call, { timeoutMs: this.options.retryTimeoutMs ?? 30_000, isClosed: this.options.isClosed });
  }

  private async ignoringNotFound(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await this.retrying(call);
      return true;
    } catch (err) {
      if (httpStatusOf(err) === 404) return false;
      throw err;
    }
  }
}
