/**
 * Pod status as a kubelet reports it: running, terminated (Succeeded / Failed with an exit
 * code), refused at admission; plus what the emulated workload reads from the pod Gantry built
 * (how long it runs, which GPUs it was placed on, its extended-resource requests). Pure functions.
 */
import { kubernetesSpecs } from '@gantry/driver';
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';

const { GANTRY_ANNOTATIONS } = kubernetesSpecs;

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export const podPhase = (pod: V1Pod): PodPhase => (pod.status?.phase as PodPhase | undefined) ?? 'Pending';
export const isFinished = (pod: V1Pod): boolean => podPhase(pod) === 'Succeeded' || podPhase(pod) === 'Failed';

/**
 * Seconds the workload still has to run: `gantry.io/duration-seconds` minus
 * `gantry.io/progress-seconds` (the driver's annotations); undefined runs until stopped.
 */
export function remainingSeconds(pod: V1Pod): number | undefined {
  const annotations = pod.metadata?.annotations ?? {};
  const duration = Number(annotations[GANTRY_ANNOTATIONS.durationSeconds]);
  if (annotations[GANTRY_ANNOTATIONS.durationSeconds] === undefined || !Number.isFinite(duration)) return undefined;
  const progress = Number(annotations[GANTRY_ANNOTATIONS.progressSeconds] ?? 0) || 0;
  return Math.max(0, duration - progress);
}

/** When the pod's container started running (a Running pod adopted after a restart). */
export function runningSince(pod: V1Pod): Date | undefined {
  const started = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt ?? pod.status?.startTime;
  return started === undefined ? undefined : new Date(started);
}

/** Extended resources the pod's containers ask for (limits, else requests), summed. */
export function extendedResourceRequests(pod: V1Pod): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const container of pod.spec?.containers ?? []) {
    const wanted = { ...container.resources?.requests, ...container.resources?.limits };
    for (const [resource, amount] of Object.entries(wanted)) {
      if (!resource.startsWith('nvidia.com/')) continue;
      totals[resource] = (totals[resource] ?? 0) + (Number(amount) || 0);
    }
  }
  return totals;
}

/** GPU indexes the placement recorded in GANTRY_GPU_INDEXES (the driver's env); empty when absent. */
export const placedGpuIndexes = (pod: V1Pod): number[] => kubernetesSpecs.placedGpuIndexesOf(pod);

function containerNames(pod: V1Pod): string[] {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  return names.length > 0 ? names : ['workload'];
}

function image(pod: V1Pod, name: string): string {
  return pod.spec?.containers?.find((c) => c.name === name)?.image ?? '';
}

function conditions(ready: boolean, at: Date): V1PodCondition[] {
  const status = ready ? 'True' : 'False';
  return [
    { type: 'Initialized', status: 'True', lastTransitionTime: at },
    { type: 'Ready', status, lastTransitionTime: at },
    { type: 'ContainersReady', status, lastTransitionTime: at },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
  ];
}

export function runningStatus(pod: V1Pod, hostIP: string, startedAt: Date): V1PodStatus {
  const statuses: V1ContainerStatus[] = containerNames(pod).map((name) => ({
    name,
    image: image(pod, name),
    imageID: '',
    ready: true,
    restartCount: 0,
    started: true,
    state: { running: { startedAt } },
  }));
  return { phase: 'Running', hostIP, podIP: hostIP, startTime: startedAt, conditions: conditions(true, startedAt), containerStatuses: statuses };
}

export interface Termination {
  exitCode: number;
  /** Container reason: Completed, Error, OOMKilled... */
  reason: string;
  message?: string;
  /** Pod-level reason (NodeLost, UnexpectedAdmissionError...). */
  podReason?: string;
}

export function terminatedStatus(pod: V1Pod, hostIP: string, startedAt: Date | undefined, finishedAt: Date, end: Termination): V1PodStatus {
  const started = startedAt ?? finishedAt;
  const statuses: V1ContainerStatus[] = containerNames(pod).map((name) => ({
    name,
    image: image(pod, name),
    imageID: '',
    ready: false,
    restartCount: 0,
    started: false,
    state: { terminated: { exitCode: end.exitCode, reason: end.reason, message: end.message, startedAt: started, finishedAt } },
  }));
  return {
    phase: end.exitCode === 0 ? 'Succeeded' : 'Failed',
    hostIP,
    podIP: hostIP,
    startTime: started,
    ...(end.podReason ? { reason: end.podReason, message: end.message } : {}),
    conditions: conditions(false, finishedAt),
    containerStatuses: statuses,
  };
}

/** Refused by the kubelet's admission (device plugin could not allocate): Failed, never started. */
export function admissionFailedStatus(reason: string, message: string): V1PodStatus {
  return { phase: 'Failed', reason, message };
}

/** The checkpoint the workload saves on SIGTERM (value of `gantry.io/checkpoint-saved`). */
export function savedCheckpoint(pod: V1Pod, progressSeconds: number, at: Date): string {
  const jobId = pod.metadata?.labels?.[kubernetesSpecs.GANTRY_LABELS.jobId] ?? pod.metadata?.name ?? '';
  const checkpoint = `k8s-checkpoint://${pod.metadata?.namespace ?? 'default'}/${jobId}/${progressSeconds.toFixed(3)}`;
  return JSON.stringify({ checkpoint, progressSeconds: Math.round(progressSeconds * 1000) / 1000, at: at.toISOString() });
}

/** Progress the workload has made: where it started from plus the time it has been running. */
export function progressSeconds(pod: V1Pod, startedAt: Date | undefined, now: Date): number {
  const annotations = pod.metadata?.annotations ?? {};
  const base = Number(annotations[GANTRY_ANNOTATIONS.progressSeconds] ?? 0) || 0;
  const ran = startedAt ? Math.max(0, (now.getTime() - startedAt.getTime()) / 1000) : 0;
  const duration = Number(annotations[GANTRY_ANNOTATIONS.durationSeconds]);
  const total = base + ran;
  return Number.isFinite(duration) && annotations[GANTRY_ANNOTATIONS.durationSeconds] !== undefined ? Math.min(duration, total) : total;
}
