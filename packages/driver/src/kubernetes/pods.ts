/**
 * Workloads as pods: one pod per replica, bound to its node with `spec.nodeName` (Gantry is the
 * scheduler), asking the device plugin for whole GPUs (`nvidia.com/gpu`), MIG slices
 * (`nvidia.com/mig-<profile>`, strategy `mixed`) or a time-sliced share (`nvidia.com/gpu.shared`);
 * Eviction bodies and which pods a drain evicts; and a job's status read back from its pods. Pure functions.
 */
import { createHash } from 'node:crypto';
import type { V1Eviction, V1Pod } from '@kubernetes/client-node';
import type { JobExitReason, ReplicaSpec, StartRequest, WorkloadStatus } from '../types';
import { AMD_GPU_RESOURCE, amdPartitionResource, GANTRY_ANNOTATIONS, GANTRY_LABELS, GPU_RESOURCE, migResource, SHARED_GPU_RESOURCE } from '../shared/labels';

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)$/;

/** Label selector of every pod of a job. */
export const jobSelector = (jobId: string): string => `${GANTRY_LABELS.jobId}=${jobId}`;

/** Label selector of every pod Gantry runs. */
export const gantryPodsSelector = GANTRY_LABELS.jobId;

/** `gantry-<job>-r<replica>`, a DNS label; long job ids are shortened with a hash. */
export function podName(jobId: string, replica: number): string {
  const suffix = `-r${replica}`;
  const slug = jobId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const name = `gantry-${slug}${suffix}`;
  if (name.length <= 63 && slug.length > 0) return name;
  const hash = createHash('sha256').update(jobId).digest('hex').slice(0, 8);
  return `gantry-${slug.slice(0, 63 - 'gantry-'.length - 9 - suffix.length).replace(/-+$/, '')}-${hash}${suffix}`;
}

/** The device plugin resource of one placed GPU: NVIDIA (MIG strategy mixed) or AMD (strategy mixed for partitions). */
function gpuResourceOf(gpu: ReplicaSpec['gpus'][number], vendor: 'nvidia' | 'amd'): string {
  if (vendor === 'amd') {
    if (gpu.milli !== undefined) throw new Error('the AMD device plugin offers no time-sliced share of a GPU; ask for a partition or a whole GPU');
    return gpu.migProfile ? amdPartitionResource(gpu.migProfile) : AMD_GPU_RESOURCE;
  }
  return gpu.migProfile ? migResource(gpu.migProfile) : gpu.milli !== undefined ? SHARED_GPU_RESOURCE : GPU_RESOURCE;
}

/** Extended-resource limits for a replica's GPUs on a node of `vendor`'s GPUs. */
export function gpuResourceLimits(gpus: ReplicaSpec['gpus'], vendor: 'nvidia' | 'amd' = 'nvidia'): Record<string, string> {
  const counts: Record<string, number> = {};
  for (const gpu of gpus) {
    const resource = gpuResourceOf(gpu, vendor);
    counts[resource] = (counts[resource] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).map(([resource, n]) => [resource, String(n)]));
}

export interface ReplicaPodInput {
  request: StartRequest;
  replica: ReplicaSpec;
  namespace: string;
  /** Image when the request names none. */
  defaultImage: string;
  /** Whose GPUs the replica's node carries (decides the resource names). Default NVIDIA. */
  vendor?: 'nvidia' | 'amd';
}

/**
 * The pod of one replica. Without a request image it runs a placeholder that sleeps for the
 * remaining duration (forever when there is none). The device plugin picks which physical GPUs
 * back the request; the GPU indexes of the placement are recorded, not enforced.
 */
export function replicaPod({ request, replica, namespace, defaultImage, vendor = 'nvidia' }: ReplicaPodInput): V1Pod {
  if (!LABEL_VALUE.test(request.jobId)) {
    throw new Error(`job id ${JSON.stringify(request.jobId)} is not a valid Kubernetes label value`);
  }
  const progress = request.progressSeconds ?? 0;
  const remaining = request.durationSeconds === undefined ? undefined : Math.max(0, request.durationSeconds - progress);
  const annotations: Record<string, string> = {
    [GANTRY_ANNOTATIONS.jobKind]: request.kind,
    [GANTRY_ANNOTATIONS.progressSeconds]: String(progress),
  };
  if (request.durationSeconds !== undefined) annotations[GANTRY_ANNOTATIONS.durationSeconds] = String(request.durationSeconds);
  if (request.checkpoint) annotations[GANTRY_ANNOTATIONS.checkpoint] = request.checkpoint;
  const env = [
    { name: 'GANTRY_JOB_ID', value: request.jobId },
    { name: 'GANTRY_REPLICA', value: String(replica.replica) },
    { name: 'GANTRY_REPLICAS', value: String(request.replicas.length) },
    { name: 'GANTRY_PROGRESS_SECONDS', value: String(progress) },
    { name: 'GANTRY_GPU_INDEXES', value: replica.gpus.map((g) => g.index).join(',') },
    ...(request.checkpoint ? [{ name: 'GANTRY_CHECKPOINT', value: request.checkpoint }] : []),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(request.jobId, replica.replica),
      namespace,
      labels: { [GANTRY_LABELS.jobId]: request.jobId, [GANTRY_LABELS.replica]: String(replica.replica) },
      annotations,
    },
    spec: {
      nodeName: replica.nodeName,
      restartPolicy: 'Never',
      tolerations: [{ key: vendor === 'amd' ? AMD_GPU_RESOURCE : GPU_RESOURCE, operator: 'Exists', effect: 'NoSchedule' }],
      containers: [
        {
          name: 'workload',
          image: request.image ?? defaultImage,
          ...(request.command
            ? { command: request.command }
            : request.image
              ? {}
              : { command: ['sleep', remaining === undefined ? 'infinity' : String(Math.ceil(remaining))] }),
          env,
          resources: { limits: gpuResourceLimits(replica.gpus, vendor) },
        },
      ],
    },
  };
}

/** The Eviction API body for a pod (POST .../pods/<name>/eviction), in the version the server serves. */
export function evictionFor(pod: { name: string; namespace: string }, apiVersion: 'policy/v1' | 'policy/v1beta1'): V1Eviction {
  return { apiVersion, kind: 'Eviction', metadata: { name: pod.name, namespace: pod.namespace } };
}

/** A drain evicts what kubectl drain evicts: not DaemonSet pods, not static (mirror) pods, not finished ones. */
export function isEvictable(pod: V1Pod): boolean {
  if (pod.metadata?.annotations?.['kubernetes.io/config.mirror']) return false;
  if (pod.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet')) return false;
  return pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

export const isPodFinished = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Being deleted (stop, suspend, eviction): the kubelet is stopping it; it no longer counts as the job's. */
export const isPodTerminating = (pod: V1Pod): boolean => pod.metadata?.deletionTimestamp !== undefined && pod.metadata?.deletionTimestamp !== null;

/** Exit code reported for the jobs of a lost node (SIGKILL), as the simulated driver does. */
export const NODE_LOST_EXIT_CODE = 137;

/**
 * A failed pod's `status.reason`: `Evicted` (the kubelet's eviction, a drain), `NodeLost` (the
 * node lifecycle controller gave up on its node), anything else a failure of the workload.
 */
export function exitReasonOf(podReason: string | undefined): JobExitReason {
  if (podReason === 'Evicted') return 'evicted';
  if (podReason === 'NodeLost') return 'node-lost';
  return 'failed';
}

/** `Xid 79`, `Xid: 48`, NVSentinel's `ErrorCode:79`: a termination message that blames the GPU. */
const XID_IN_MESSAGE = /\b(?:Xid\s*:?\s*|ErrorCode\s*[:=]\s*)\d+/i;

/** The GPU indexes the placement recorded on the pod (its GANTRY_GPU_INDEXES). */
export function placedGpuIndexesOf(pod: V1Pod): number[] {
  const value = pod.spec?.containers?.[0]?.env?.find((e) => e.name === 'GANTRY_GPU_INDEXES')?.value ?? '';
  return value
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n >= 0);
}

/**
 * Whether a failed pod died with its GPU: its container's termination message names an Xid (the
 * CUDA error a process-fatal Xid leaves), or `gpuFaulted` (the health source: an Xid condition on
 * one of the pod's GPUs) says so.
 */
function diedWithGpu(pod: V1Pod, gpuFaulted?: (pod: V1Pod) => boolean): boolean {
  const terminated = pod.status?.containerStatuses?.map((c) => c.state?.terminated).find((t) => t !== undefined);
  if (terminated && terminated.exitCode !== 0 && XID_IN_MESSAGE.test(`${terminated.message ?? ''} ${pod.status?.message ?? ''}`)) return true;
  return gpuFaulted?.(pod) ?? false;
}

/**
 * How a job's pods ended, once all succeeded or one failed; undefined while it runs. A pod killed
 * by a fatal Xid is a `gpu-fault` (the failover loop moves the job), with its exit code.
 */
export function jobExitFromPods(pods: readonly V1Pod[], gpuFaulted?: (pod: V1Pod) => boolean): { exitCode: number; reason: JobExitReason } | undefined {
  if (pods.length === 0) return undefined;
  const failed = pods.find((p) => p.status?.phase === 'Failed');
  if (failed) {
    const exitCode = failed.status?.containerStatuses?.find((c) => c.state?.terminated)?.state?.terminated?.exitCode;
    let reason = exitReasonOf(failed.status?.reason);
    if (reason === 'failed' && diedWithGpu(failed, gpuFaulted)) reason = 'gpu-fault';
    const fallback = reason === 'node-lost' ? NODE_LOST_EXIT_CODE : 1;
    return { exitCode: exitCode === undefined || exitCode === 0 ? fallback : exitCode, reason };
  }
  return pods.every((p) => p.status?.phase === 'Succeeded') ? { exitCode: 0, reason: 'completed' } : undefined;
}

/**
 * A job's status from its pods at `now` (ms). Progress is the progress it started from plus the
 * time its slowest replica has been running, capped at its duration.
 */
export function workloadStatusFromPods(pods: readonly V1Pod[], now: number, gpuFaulted?: (pod: V1Pod) => boolean): WorkloadStatus {
  if (pods.length === 0) return { state: 'unknown', progressSeconds: 0 };
  const annotations = pods[0].metadata?.annotations ?? {};
  const base = Number(annotations[GANTRY_ANNOTATIONS.progressSeconds] ?? 0) || 0;
  const durationText = annotations[GANTRY_ANNOTATIONS.durationSeconds];
  const duration = durationText === undefined ? Number.POSITIVE_INFINITY : Number(durationText);
  const exit = jobExitFromPods(pods, gpuFaulted);
  if (exit) {
    const progressSeconds = exit.exitCode === 0 && Number.isFinite(duration) ? duration : base + runningSeconds(pods, now);
    const status: WorkloadStatus = { state: 'exited', progressSeconds: Math.min(duration, progressSeconds), exitCode: exit.exitCode, reason: exit.reason };
    const message = terminationMessages(pods);
    if (message) status.message = message;
    return status;
  }
  const starting = pods.some((p) => p.status?.phase !== 'Running' && !isPodFinished(p));
  if (starting) return { state: 'running', progressSeconds: base, starting: true };
  return { state: 'running', progressSeconds: Math.min(duration, base + runningSeconds(pods, now)) };
}

/** What the ended containers wrote to their termination log (a burn-in's per-GPU findings), joined. */
function terminationMessages(pods: readonly V1Pod[]): string {
  return pods
    .flatMap((p) => p.status?.containerStatuses?.map((c) => c.state?.terminated?.message ?? '') ?? [])
    .filter(Boolean)
    .join('\n');
}

/** Seconds the slowest replica's container has run, up to now or until it ended (0 if one has not started). */
function runningSeconds(pods: readonly V1Pod[], now: number): number {
  const elapsed = pods.map((p) => {
    const state = p.status?.containerStatuses?.[0]?.state;
    const started = state?.running?.startedAt ?? state?.terminated?.startedAt ?? p.status?.startTime;
    if (started === undefined) return 0;
    const ended = state?.terminated?.finishedAt === undefined ? now : new Date(state.terminated.finishedAt).getTime();
    return Math.max(0, (ended - new Date(started).getTime()) / 1000);
  });
  return Math.min(...elapsed);
}
