/**
 * What the driver knows of the cluster without asking: three informers (list + watch, informer.ts)
 * kept for as long as the driver lives, indexed the way a start and a status read them.
 *
 *   Gantry's pods      (workload namespace, every phase)   by job: status(), "already running?"
 *   GPU nodes          (the discovery selector)             by name: allocatable for the capacity check
 *   active pods        (every namespace, not finished)      by node: what holds a node's GPUs, Gantry's or not
 *
 * A cache lags the API server by a watch event; the driver uses it where a stale answer is safe or
 * is checked again against the API server before it matters (kubernetes-driver.ts says where).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { GANTRY_LABELS } from '../shared/labels';
import { Informer, type Delta, type InformerOptions } from './informer';
import type { KubeApi } from './kube-api';
import { gantryPodsSelector } from './pods';

export interface ClusterViewOptions {
  api: KubeApi;
  namespace: string;
  nodeLabelSelector?: string;
  backoff?: { initialMs: number; maxMs: number };
  watchTimeoutSeconds?: number;
  warn?(message: string): void;
}

const keyOf = (o: { metadata?: { namespace?: string; name?: string } }): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** Keeps `index[group][key] = object` in step with an informer's deltas. */
function indexBy<T extends { metadata?: { namespace?: string; name?: string } }>(
  index: Map<string, Map<string, T>>,
  groupOf: (o: T) => string | undefined,
): (delta: Delta<T>) => void {
  const remove = (o: T) => {
    const group = groupOf(o);
    const members = group === undefined ? undefined : index.get(group);
    members?.delete(keyOf(o));
    if (group !== undefined && members?.size === 0) index.delete(group);
  };
  return (delta) => {
    if (delta.previous) remove(delta.previous);
    if (delta.type === 'DELETED') return remove(delta.object);
    const group = groupOf(delta.object);
    if (group === undefined) return;
    const members = index.get(group) ?? new Map<string, T>();
    members.set(keyOf(delta.object), delta.object);
    index.set(group, members);
  };
}

export class ClusterView {
  readonly gantryPods: Informer<V1Pod>;
  readonly nodes: Informer<V1Node>;
  readonly activePods: Informer<V1Pod>;
  private readonly podsByJob = new Map<string, Map<string, V1Pod>>();
  private readonly activeByNode = new Map<string, Map<string, V1Pod>>();
  private started?: Promise<void>;

  constructor(options: ClusterViewOptions) {
    const { api, namespace, nodeLabelSelector } = options;
    const common: Pick<InformerOptions<unknown>, 'backoff' | 'watchTimeoutSeconds' | 'warn'> = {
      backoff: options.backoff,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      warn: options.warn,
    };
    this.gantryPods = new Informer({
      ...common,
      what: `pods in ${namespace}`,
      source: api.podInformerSource(namespace, gantryPodsSelector),
      onDelta: indexBy(this.podsByJob, (p) => p.metadata?.labels?.[GANTRY_LABELS.jobId]),
    });
    this.nodes = new Informer({ ...common, what: 'nodes', source: api.nodeInformerSource(nodeLabelSelector) });
    this.activePods = new Informer({
      ...common,
      what: 'active pods',
      source: api.activePodInformerSource(),
      onDelta: indexBy(this.activeByNode, (p) => p.spec?.nodeName || undefined),
    });
  }

  private get informers() {
    return [this.gantryPods, this.nodes, this.activePods];
  }

  /** Starts the informers (once); resolves when each has listed. */
  synced(): Promise<void> {
    this.started ??= (async () => {
      for (const informer of this.informers) informer.start();
      await Promise.all(this.informers.map((i) => i.synced()));
    })();
    return this.started;
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  /** The job's pods as last seen, every phase (being deleted included). */
  podsOfJob(jobId: string): V1Pod[] {
    return [...(this.podsByJob.get(jobId)?.values() ?? [])];
  }

  node(name: string): V1Node | undefined {
    return this.nodes.get(undefined, name);
  }

  /** Unfinished pods bound to the node, whoever created them. */
  activePodsOn(nodeName: string): V1Pod[] {
    return [...(this.activeByNode.get(nodeName)?.values() ?? [])];
  }
}
