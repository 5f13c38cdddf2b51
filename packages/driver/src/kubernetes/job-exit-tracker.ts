/**
 * Job exits over time: a job ends when its pods have all succeeded or one has failed, or when a
 * Node under one of its running pods is deleted (`node-lost`). Each run of a job (its set of pod
 * uids) is reported at most once, whichever way the news arrives: a watch event, a relist after a
 * reconnect, or the node's deletion followed later by its pods' fate.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { DriverEvent } from '../types';
import { isPodFinished, jobExitFromPods, NODE_LOST_EXIT_CODE } from './pods';

export class JobExitTracker {
  /** Pod uids whose run has been reported. */
  private readonly reported = new Set<string>();

  /** The job's live pods changed: its exit, if it just ended (`gpuFaulted`: the health source blames the pod's GPU). */
  onJobPods(jobId: string, pods: readonly V1Pod[], now: number, gpuFaulted?: (pod: V1Pod) => boolean): DriverEvent[] {
    const exit = jobExitFromPods(pods, gpuFaulted);
    if (!exit || !this.isNewRun(pods)) return [];
    this.markReported(pods);
    return [{ type: 'job-exited', jobId, exitCode: exit.exitCode, reason: exit.reason, at: now }];
  }

  /** A node was deleted: every job with a pod still running there is lost. */
  onNodeLost(nodeName: string, podsByJob: ReadonlyMap<string, readonly V1Pod[]>, now: number): DriverEvent[] {
    const events: DriverEvent[] = [];
    for (const [jobId, pods] of podsByJob) {
      const hit = pods.some((p) => p.spec?.nodeName === nodeName && !isPodFinished(p));
      if (!hit || !this.isNewRun(pods)) continue;
      this.markReported(pods);
      events.push({ type: 'job-exited', jobId, exitCode: NODE_LOST_EXIT_CODE, reason: 'node-lost', at: now });
    }
    return events;
  }

  /** Forgets pods that no longer exist (keeps the set from growing without bound). */
  forget(podUid: string): void {
    this.reported.delete(podUid);
  }

  private isNewRun(pods: readonly V1Pod[]): boolean {
    return pods.some((p) => !this.reported.has(uidOf(p)));
  }

  private markReported(pods: readonly V1Pod[]): void {
    for (const pod of pods) this.reported.add(uidOf(pod));
  }
}

const uidOf = (pod: V1Pod): string => pod.metadata?.uid ?? `${pod.metadata?.namespace}/${pod.metadata?.name}`;
