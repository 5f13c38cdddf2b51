/**
 * What the driver knows of the cluster without asking: informers (list + watch, informer.ts) kept
 * for as long as the driver lives, indexed the way a start and a status read them.
 *
 *   Gantry's pods      (workload namespace, every phase)        by job: status(), "already running?"
 *   GPU nodes          (the discovery selector)                  by name: allocatable for the capacity check
 *   other pods         (every namespace, not finished,           by node, with Gantry's unfinished pods:
 *                       without Gantry's label)                  what holds a node's GPUs, Gantry's or not
 *   stray Gantry pods  (Gantry's label outside its namespace,    (someone else's pods carrying the label)
 *                       not finished)
 *
 * Each pod comes through exactly one pod watch: Gantry's own pods are not watched a second time
 * as "active pods" (every start's pod was sent to the driver twice, and the API server served it
 * to one more watcher, for each of its changes).
 *
 * A cache lags the API server by a watch event; the driver uses it where a stale answer is safe or
 * is checked again against the API server before it matters (kubernetes-driver.ts says where).
 * The pods the driver itself is creating are counted on their node from before the create is sent
 * until Gantry's pods watch shows them (kube-scheduler's "assumed" pods): a start never misses
 * the GPUs a concurrent start has just taken because its watch event is still on the way.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { GANTRY_LABELS } from '../shared/labels';
import { Informer, type Delta, type InformerOptions } from './informer';
import type { KubeApi } from './kube-api';
import { gantryPodsSelector, isPodFinished } from './pods';

export interface ClusterViewOptions {
  api: KubeApi;
  namespace: string;
  nodeLabelSelector?: string;
  backoff?: { initialMs: number; maxMs: number };
  watchTimeoutSeconds?: number;
  warn?(message: string): void;
}

const keyOf = (o: { metadata?: { namespace?: string; name?: string } }): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** An assumed pod the watch never showed (its watch was down, or it finished at once) stops counting after this long. */
export const ASSUMED_POD_TTL_MS = 30_000;

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
  /** Unfinished pods without Gantry's label, in every namespace: what others run on the GPU nodes. */
  readonly otherPods: Informer<V1Pod>;
  private readonly strayGantryPods: Informer<V1Pod>;
  private readonly podsByJob = new Map<string, Map<string, V1Pod>>();
  private readonly activeByNode = new Map<string, Map<string, V1Pod>>();
  /** Pods being created by this driver, by node, until Gantry's pods watch shows them. */
  private readonly assumedByNode = new Map<string, Map<string, { pod: V1Pod; at: number }>>();
  private started?: Promise<void>;

  constructor(options: ClusterViewOptions) {
    const { api, namespace, nodeLabelSelector } = options;
    const common: Pick<InformerOptions<unknown>, 'backoff' | 'watchTimeoutSeconds' | 'warn'> = {
      backoff: options.backoff,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      warn: options.warn,
    };
    const indexByJob = indexBy(this.podsByJob, (p) => p.metadata?.labels?.[GANTRY_LABELS.jobId]);
    const indexActive = indexBy(this.activeByNode, (p) => p.spec?.nodeName || undefined);
    this.gantryPods = new Informer({
      ...common,
      what: `pods in ${namespace}`,
      source: api.podInformerSource(namespace, gantryPodsSelector),
      onDelta: (delta: Delta<V1Pod>) => {
        indexByJob(delta);
        // a finished pod no longer holds its node's GPUs (the other pod watches drop it: DELETED)
        indexActive(isPodFinished(delta.object) ? { ...delta, type: 'DELETED' } : delta);
        this.forget(delta.object); // seen: no longer assumed
      },
    });
    this.nodes = new Informer({ ...common, what: 'nodes', source: api.nodeInformerSource(nodeLabelSelector) });
    this.otherPods = new Informer({
      ...common,
      what: 'other pods',
      source: api.activePodInformerSource({ labelSelector: `!${gantryPodsSelector}` }),
      onDelta: indexActive,
    });
    this.strayGantryPods = new Informer({
      ...common,
      what: `Gantry-labelled pods outside ${namespace}`,
      source: api.activePodInformerSource({ labelSelector: gantryPodsSelector, notInNamespace: namespace }),
      onDelta: indexActive,
    });
  }

  private get informers() {
    return [this.gantryPods, this.nodes, this.otherPods, this.strayGantryPods];
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

  /** Unfinished pods bound to the node, whoever created them, and the ones this driver is creating there. */
  activePodsOn(nodeName: string): V1Pod[] {
    const seen = this.activeByNode.get(nodeName);
    const pods = [...(seen?.values() ?? [])];
    const assumed = this.assumedByNode.get(nodeName);
    if (!assumed) return pods;
    const now = Date.now();
    for (const [key, { pod, at }] of assumed) {
      if (now - at > ASSUMED_POD_TTL_MS) assumed.delete(key);
      else if (!seen?.has(key)) pods.push(pod);
    }
    if (assumed.size === 0) this.assumedByNode.delete(nodeName);
    return pods;
  }

  /** Counts a pod about to be created on its node (spec.nodeName) until Gantry's pods watch shows it or forget() is called. */
  assume(pod: V1Pod): void {
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return;
    const assumed = this.assumedByNode.get(nodeName) ?? new Map<string, { pod: V1Pod; at: number }>();
    assumed.set(keyOf(pod), { pod, at: Date.now() });
    this.assumedByNode.set(nodeName, assumed);
  }

  /** The pod's create failed, or the watch shows it now. */
  forget(pod: V1Pod): void {
    const nodeName = pod.spec?.nodeName;
    const assumed = nodeName ? this.assumedByNode.get(nodeName) : undefined;
    if (!assumed?.delete(keyOf(pod))) return;
    if (assumed.size === 0) this.assumedByNode.delete(nodeName!);
  }
}
