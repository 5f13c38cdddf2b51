/**
 * The driver's events on Kubernetes, from three watches (informer.ts) while someone listens:
 * - Gantry's pods -> `job-exited` (job-exit-tracker.ts);
 * - GPU nodes -> `node-down`/`node-up`, `nic-down`/`nic-up`, `xid` from conditions and taints
 *   (node-health-tracker.ts), and a deleted Node -> `node-down` plus `job-exited` (`node-lost`)
 *   for the jobs that ran on it;
 * - core/v1 Events about nodes -> `xid` (health-signals.ts).
 * Watches reconnect and relist by themselves; the trackers make sure a change is reported once.
 */
import type { CoreV1Event, V1Node, V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../clock';
import type { DriverEventBus } from '../event-bus';
import type { DriverEvent } from '../types';
import { GANTRY_LABELS } from '../shared/labels';
import { xidsOfEvent } from './health-signals';
import { Informer, type Delta } from './informer';
import { JobExitTracker } from './job-exit-tracker';
import type { ClusterView } from './cluster-view';
import type { KubeApi } from './kube-api';
import { NodeHealthTracker } from './node-health-tracker';
import { inventoryNodeFromKubeNode } from './node-inventory';
import { isPodTerminating, placedGpuIndexesOf } from './pods';
import { xidEffect } from '../shared/xid';

export interface KubeEventSourceOptions {
  api: KubeApi;
  /** The driver's informers of Gantry's pods and of the GPU nodes (shared with start and status). */
  view: ClusterView;
  events: DriverEventBus;
  clock: Clock;
  /** Watch reconnect backoff. Default 200 ms doubling to 10 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** Server-side watch timeout, seconds (default 300). */
  watchTimeoutSeconds?: number;
  warn?(message: string): void;
}

export class KubeEventSource {
  private readonly jobs = new JobExitTracker();
  private readonly nodes = new NodeHealthTracker();
  private readonly podInformer: Informer<V1Pod>;
  private readonly nodeInformer: Informer<V1Node>;
  private readonly eventInformer: Informer<CoreV1Event>;
  private unsubscribe: (() => void)[] = [];
  private started = false;

  constructor(private readonly options: KubeEventSourceOptions) {
    const { api } = options;
    const common = { backoff: options.backoff, watchTimeoutSeconds: options.watchTimeoutSeconds, warn: options.warn };
    this.podInformer = options.view.gantryPods;
    this.nodeInformer = options.view.nodes;
    this.eventInformer = new Informer({
      ...common,
      what: 'node events',
      source: api.nodeEventInformerSource(),
      onDelta: (d) => this.onEvent(d),
    });
  }

  private get informers() {
    return [this.podInformer, this.nodeInformer, this.eventInformer];
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    // Pods first: a node deleted in the first moments needs its pods known. The view's informers
    // hand a late subscriber what they already hold as the initial state.
    this.unsubscribe = [this.podInformer.subscribe((d) => this.onPod(d)), this.nodeInformer.subscribe((d) => this.onNode(d))];
    void this.options.view.synced();
    this.eventInformer.start();
  }

  /** Stops reporting; the view's informers run on for the driver (it stops them on close). */
  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe = [];
    await this.eventInformer.stop();
  }

  /** Resolves once every watch has listed its state. */
  async synced(): Promise<void> {
    await Promise.all([this.options.view.synced(), this.eventInformer.synced()]);
  }

  /** Watch statistics (lists, watches, 410s, errors), per resource. */
  get stats() {
    return { pods: this.podInformer.stats, nodes: this.nodeInformer.stats, events: this.eventInformer.stats };
  }

  private emit(events: DriverEvent[]): void {
    for (const event of events) this.options.events.emit(event);
  }

  private onPod(delta: Delta<V1Pod>): void {
    const jobId = delta.object.metadata?.labels?.[GANTRY_LABELS.jobId];
    if (delta.type === 'DELETED' && delta.object.metadata?.uid) this.jobs.forget(delta.object.metadata.uid);
    if (!jobId) return;
    this.emit(this.jobs.onJobPods(jobId, this.livePodsOfJob(jobId), this.options.clock.now(), (pod) => this.gpuFaulted(pod)));
  }

  private onNode(delta: Delta<V1Node>): void {
    if (!inventoryNodeFromKubeNode(delta.object)) return; // not a GPU node Gantry manages
    const now = this.options.clock.now();
    this.emit(this.nodes.onNode(delta, now));
    if (delta.type === 'DELETED') {
      const byJob = new Map<string, V1Pod[]>();
      for (const pod of this.podInformer.list()) {
        const jobId = pod.metadata?.labels?.[GANTRY_LABELS.jobId];
        if (jobId && !isPodTerminating(pod)) byJob.set(jobId, [...(byJob.get(jobId) ?? []), pod]);
      }
      this.emit(this.jobs.onNodeLost(delta.object.metadata?.name ?? '', byJob, now));
    }
  }

  private onEvent(delta: Delta<CoreV1Event>): void {
    if (delta.initial || delta.type === 'DELETED') return; // events from before the driver started are history
    const occurrences = (delta.object.count ?? 1) - (delta.previous?.count ?? 0);
    if (delta.type === 'MODIFIED' && occurrences <= 0) return;
    const nodeName = delta.object.involvedObject?.name;
    const xids = xidsOfEvent(delta.object);
    if (!nodeName || xids.length === 0) return;
    const now = this.options.clock.now();
    this.emit(xids.map((x) => ({ type: 'xid', nodeName, gpuIndex: x.gpuIndex, xid: x.xid, at: now })));
  }

  /** A fatal Xid held on one of the GPUs the pod was placed on (the node's health conditions). */
  gpuFaulted(pod: V1Pod): boolean {
    const xids = this.nodes.health(pod.spec?.nodeName ?? '')?.xids ?? [];
    const gpus = placedGpuIndexesOf(pod);
    return xids.some((x) => gpus.includes(x.gpuIndex) && xidEffect(x.xid).killsProcesses);
  }

  /** A job's pods that are not being deleted (a deleted pod was stopped, suspended or evicted on purpose). */
  private livePodsOfJob(jobId: string): V1Pod[] {
    return this.options.view.podsOfJob(jobId).filter((p) => !isPodTerminating(p));
  }
}
