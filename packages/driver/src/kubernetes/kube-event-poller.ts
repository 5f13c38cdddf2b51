/**
 * Turns cluster state into driver events by polling: `job-exited` when a job's pods have all
 * succeeded or one has failed, `node-down` / `node-up` when a GPU node's Ready condition flips.
 * Runs only while someone listens. (Xid and NIC events need a health source such as DCGM or
 * NVSentinel; they are not produced here.)
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../clock';
import type { DriverEventBus } from '../event-bus';
import type { KubeApi } from './kube-api';
import { GANTRY_LABELS } from '../shared/labels';
import { inventoryNodeFromKubeNode } from './node-inventory';
import { gantryPodsSelector, jobExitFromPods } from './pods';

export interface KubeEventPollerOptions {
  api: KubeApi;
  events: DriverEventBus;
  clock: Clock;
  namespace: string;
  nodeLabelSelector?: string;
  intervalMs: number;
}

export class KubeEventPoller {
  /** Exits already reported, keyed by job id + pod uids (a restarted job gets new pods). */
  private readonly reportedExits = new Set<string>();
  private readonly nodeReady = new Map<string, boolean>();
  private timer?: NodeJS.Timeout;
  private polling = false;

  constructor(private readonly options: KubeEventPollerOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      await Promise.all([this.pollJobs(), this.pollNodes()]);
    } catch (err) {
      if (this.timer) process.emitWarning(`kubernetes driver event poll failed: ${(err as Error).message}`);
    } finally {
      this.polling = false;
    }
  }

  private async pollJobs(): Promise<void> {
    const { api, namespace, events, clock } = this.options;
    const byJob = new Map<string, V1Pod[]>();
    for (const pod of await api.listPods(namespace, gantryPodsSelector)) {
      const jobId = pod.metadata?.labels?.[GANTRY_LABELS.jobId];
      if (jobId) byJob.set(jobId, [...(byJob.get(jobId) ?? []), pod]);
    }
    for (const [jobId, pods] of byJob) {
      const exit = jobExitFromPods(pods);
      const key = exitKey(jobId, pods);
      if (!exit || this.reportedExits.has(key)) continue;
      this.reportedExits.add(key);
      events.emit({ type: 'job-exited', jobId, exitCode: exit.exitCode, reason: exit.reason, at: clock.now() });
    }
  }

  private async pollNodes(): Promise<void> {
    const { api, events, clock, nodeLabelSelector } = this.options;
    for (const node of await api.listNodes(nodeLabelSelector)) {
      const inventory = inventoryNodeFromKubeNode(node);
      if (!inventory) continue;
      const ready = inventory.ready === true;
      const before = this.nodeReady.get(inventory.name);
      this.nodeReady.set(inventory.name, ready);
      if (before === undefined || before === ready) continue;
      events.emit({ type: ready ? 'node-up' : 'node-down', nodeName: inventory.name, at: clock.now() });
    }
  }
}

function exitKey(jobId: string, pods: readonly V1Pod[]): string {
  return `${jobId}:${pods
    .map((p) => p.metadata?.uid ?? p.metadata?.name)
    .sort()
    .join(',')}`;
}
