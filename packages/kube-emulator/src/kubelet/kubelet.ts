/**
 * The kubelets of every emulated node, as stages on a pod bound to one of them (spec.nodeName):
 *
 *   Pending      --startSeconds-->            Running (admission: the devices must be free)
 *   Running      --remaining duration-->      Succeeded (exit 0)
 *   deletion     --sigtermSeconds-->          checkpoint saved, exit 143, object removed
 *                (grace period shorter:       SIGKILL at its end, exit 137, no checkpoint)
 *   fatal Xid on its GPU                      Failed (exit 1)
 *   burn-in pod                               per-GPU findings in its termination message; a latent
 *                                             GPU defect fails it part way through (burn-in-findings.ts)
 *   node down                                 Failed, reason NodeLost (exit 137)
 *
 * Pods come from a watch on every bound pod; pods already there when the emulator starts are
 * adopted where they stand (a Running pod keeps its start time and finishes on schedule).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { EmulatedNode } from '../cluster/emulated-node';
import { internalIp } from '../cluster/node-objects';
import { httpStatusOf, type KubeClients } from '../kube/client';
import { Informer } from '../kube/informer';
import { MERGE_PATCH, kubeJsonRequest } from '@gantry/driver';
import type { WorkQueue } from '../kube/work-queue';
import { kubernetesSpecs } from '@gantry/driver';
import { nodeEvent } from '../health/fault-reports';
import { BURN_IN_FAILED_EVENT_REASON, burnInFailedMessage, burnInOutcome, isBurnInPod } from './burn-in-findings';
import { DeviceAllocator } from './device-allocator';
import {
  admissionFailedStatus,
  extendedResourceRequests,
  isFinished,
  placedGpuIndexes,
  podPhase,
  progressSeconds,
  remainingSeconds,
  runningSince,
  runningStatus,
  savedCheckpoint,
  terminatedStatus,
  type Termination,
} from './pod-status';

export interface KubeletOptions {
  clients: KubeClients;
  queue: WorkQueue;
  /** Real seconds from Pending to Running. */
  startSeconds: number;
  /** Real seconds the workload takes to save its checkpoint and exit after SIGTERM (capped by the grace period). */
  sigtermSeconds: number;
  sharedReplicasPerGpu: number;
  onError: (what: string, err: unknown) => void;
}

/** Exit codes, as the simulated driver's (SIM_EXIT_CODES): SIGTERM, SIGKILL, CUDA error. */
export const EXIT_CODES = { sigterm: 143, sigkill: 137, nodeLost: 137, gpuFault: 1 } as const;

interface TrackedPod {
  uid: string;
  namespace: string;
  name: string;
  nodeName: string;
  startedAt?: Date;
  timer?: NodeJS.Timeout;
  /** A terminal status is being written or the object is being removed. */
  ending: boolean;
  terminating: boolean;
}

export class Kubelet {
  readonly devices: DeviceAllocator;
  private readonly pods = new Map<string, TrackedPod>();
  private readonly informer: Informer<V1Pod>;
  private stopped = false;

  constructor(
    private readonly nodes: ReadonlyMap<string, EmulatedNode>,
    private readonly options: KubeletOptions,
  ) {
    this.devices = new DeviceAllocator(options.sharedReplicasPerGpu);
    const { core } = options.clients;
    this.informer = new Informer<V1Pod>({
      config: options.clients.config,
      path: '/api/v1/pods',
      fieldSelector: 'spec.nodeName!=',
      list: () => core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' }),
      onChange: (event, pod) => {
        try {
          if (event === 'deleted') this.forget(pod);
          else this.sync(pod);
        } catch (err) {
          options.onError(`handling pod ${pod.metadata?.namespace}/${pod.metadata?.name}`, err);
        }
      },
      onError: (err) => options.onError('watching pods', err),
    });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
    for (const pod of this.pods.values()) clearTimeout(pod.timer);
  }

  /** Pods of the emulator's nodes it currently tracks (not finished). */
  podsOn(nodeName: string): V1Pod[] {
    return [...this.informer.cache.values()].filter((p) => p.spec?.nodeName === nodeName && !isFinished(p));
  }

  /** The pod object as last seen, by uid. */
  podByUid(uid: string): V1Pod | undefined {
    const tracked = this.pods.get(uid);
    return tracked ? this.informer.cache.get(`${tracked.namespace}/${tracked.name}`) : undefined;
  }

  /** Kills the pods running on a GPU (a fatal Xid): Failed with the CUDA error's exit code. */
  killPodsOnGpu(nodeName: string, gpuIndex: number, message: string): void {
    for (const uid of this.devices.podsOnGpu(nodeName, gpuIndex)) {
      this.end(uid, { exitCode: EXIT_CODES.gpuFault, reason: 'Error', message });
    }
  }

  /** The node went away under its pods. */
  loseNode(nodeName: string): void {
    for (const tracked of [...this.pods.values()].filter((p) => p.nodeName === nodeName)) {
      this.end(tracked.uid, {
        exitCode: EXIT_CODES.nodeLost,
        reason: 'Error',
        podReason: 'NodeLost',
        message: `Node ${nodeName} which was running pod is unresponsive`,
      });
    }
  }

  /** The node is back: pods that waited for its kubelet start now. */
  nodeBack(nodeName: string): void {
    for (const pod of this.informer.cache.values()) if (pod.spec?.nodeName === nodeName) this.sync(pod);
  }

  private sync(pod: V1Pod): void {
    const node = this.nodes.get(pod.spec?.nodeName ?? '');
    const uid = pod.metadata?.uid;
    if (!node || !uid || this.stopped) return;
    let tracked = this.pods.get(uid);
    if (!tracked) {
      tracked = { uid, namespace: pod.metadata!.namespace!, name: pod.metadata!.name!, nodeName: node.name, ending: false, terminating: false };
      this.pods.set(uid, tracked);
    }
    if (pod.metadata?.deletionTimestamp) return this.terminate(tracked, pod, node);
    if (isFinished(pod)) {
      clearTimeout(tracked.timer);
      this.devices.release(node.name, uid);
      return;
    }
    if (node.down || tracked.ending || tracked.timer || tracked.startedAt) return;
    if (podPhase(pod) === 'Running') return this.adoptRunning(tracked, pod, node);
    tracked.timer = setTimeout(() => void this.run(tracked, node), this.options.startSeconds * 1000);
  }

  private forget(pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    const tracked = uid ? this.pods.get(uid) : undefined;
    if (!tracked) return;
    clearTimeout(tracked.timer);
    this.devices.release(tracked.nodeName, tracked.uid);
    this.pods.delete(tracked.uid);
  }

  /** Pending -> Running, once the device plugins allocate. */
  private async run(tracked: TrackedPod, node: EmulatedNode): Promise<void> {
    tracked.timer = undefined;
    const pod = this.podByUid(tracked.uid);
    if (!pod || pod.metadata?.deletionTimestamp || isFinished(pod) || node.down || this.stopped) return;
    const allocated = this.devices.allocate(node, tracked.uid, extendedResourceRequests(pod), placedGpuIndexes(pod));
    if (!allocated.ok) {
      tracked.ending = true;
      await this.writeStatus(tracked, admissionFailedStatus(allocated.reason, allocated.message));
      return;
    }
    const startedAt = new Date();
    tracked.startedAt = startedAt;
    await this.writeStatus(tracked, runningStatus(pod, internalIp(node.name), startedAt));
    this.scheduleCompletion(tracked, pod, startedAt);
  }

  private adoptRunning(tracked: TrackedPod, pod: V1Pod, node: EmulatedNode): void {
    const startedAt = runningSince(pod) ?? new Date();
    tracked.startedAt = startedAt;
    const placed = placedGpuIndexes(pod);
    const allocated = this.devices.allocate(node, tracked.uid, extendedResourceRequests(pod), placed);
    if (!allocated.ok) this.devices.adopt(node.name, tracked.uid, { resources: extendedResourceRequests(pod), gpuIndexes: placed });
    this.scheduleCompletion(tracked, pod, startedAt);
  }

  private scheduleCompletion(tracked: TrackedPod, pod: V1Pod, startedAt: Date): void {
    const remaining = remainingSeconds(pod);
    if (remaining === undefined || this.stopped) return;
    let end: Termination = { exitCode: 0, reason: 'Completed' };
    let endsAfterSeconds = remaining;
    let failedGpus: number[] = [];
    const node = this.nodes.get(tracked.nodeName);
    if (node && isBurnInPod(pod)) {
      const indexes = this.devices.allocations(node.name).get(tracked.uid)?.gpuIndexes ?? [];
      const outcome = burnInOutcome(
        node.gpus.filter((g) => indexes.includes(g.index)),
        remaining,
      );
      end = outcome.termination;
      endsAfterSeconds = outcome.failAtSeconds ?? remaining;
      failedGpus = outcome.failed;
    }
    const dueMs = Math.max(0, startedAt.getTime() + endsAfterSeconds * 1000 - Date.now());
    clearTimeout(tracked.timer);
    tracked.timer = setTimeout(() => {
      tracked.timer = undefined;
      this.end(tracked.uid, end);
      if (node && failedGpus.length > 0) void this.reportFailedDiagnostic(node, tracked, failedGpus);
    }, dueMs);
  }

  /** A failed burn-in, as a GPU health monitor reports a failed diagnostic: a Warning Event on the Node. */
  private async reportFailedDiagnostic(node: EmulatedNode, tracked: TrackedPod, gpus: number[]): Promise<void> {
    const { clients, queue } = this.options;
    const body = nodeEvent({
      node,
      type: 'Warning',
      reason: BURN_IN_FAILED_EVENT_REASON,
      message: burnInFailedMessage(node.name, gpus, tracked.name),
      component: 'dcgm-diag',
      now: new Date(),
    });
    try {
      await queue.run(() => clients.core.createNamespacedEvent({ namespace: 'default', body }));
    } catch (err) {
      this.options.onError(`reporting the failed burn-in of pod ${tracked.namespace}/${tracked.name}`, err);
    }
  }

  /** Writes a terminal status (the pod stays, as Succeeded or Failed). */
  private end(uid: string, termination: Termination): void {
    const tracked = this.pods.get(uid);
    const pod = this.podByUid(uid);
    if (!tracked || !pod || tracked.ending || isFinished(pod)) return;
    tracked.ending = true;
    clearTimeout(tracked.timer);
    tracked.timer = undefined;
    this.devices.release(tracked.nodeName, uid);
    const status = terminatedStatus(pod, internalIp(tracked.nodeName), tracked.startedAt, new Date(), termination);
    void this.writeStatus(tracked, status);
  }

  /**
   * Graceful deletion: SIGTERM; the workload saves its checkpoint (sigtermSeconds) and exits 143.
   * When the grace period is shorter, SIGKILL ends it first (exit 137, no checkpoint). Then the
   * kubelet removes the object (DELETE with grace 0, preconditioned on the uid).
   */
  private terminate(tracked: TrackedPod, pod: V1Pod, node: EmulatedNode): void {
    if (tracked.terminating) return;
    tracked.terminating = true;
    clearTimeout(tracked.timer);
    const graceMs = (pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    const running = podPhase(pod) === 'Running' && !node.down;
    const saveMs = this.options.sigtermSeconds * 1000;
    const checkpoints = running && saveMs <= graceMs;
    const delayMs = !running ? 0 : checkpoints ? saveMs : graceMs;
    tracked.timer = setTimeout(() => void this.finishTermination(tracked, running, checkpoints, node), delayMs);
  }

  private async finishTermination(tracked: TrackedPod, wasRunning: boolean, checkpoints: boolean, node: EmulatedNode): Promise<void> {
    if (this.stopped) return;
    const pod = this.podByUid(tracked.uid);
    if (!pod) return;
    const { clients, queue } = this.options;
    try {
      if (wasRunning && !isFinished(pod)) {
        const now = new Date();
        const startedAt = tracked.startedAt ?? runningSince(pod);
        if (checkpoints) {
          const saved = savedCheckpoint(pod, progressSeconds(pod, startedAt, now), now);
          const annotations = { [kubernetesSpecs.GANTRY_ANNOTATIONS.checkpointSaved]: saved };
          await queue.run(() =>
            clients.core.patchNamespacedPod({ name: tracked.name, namespace: tracked.namespace, body: { metadata: { annotations } } }, clients.mergePatch),
          );
        }
        const end: Termination = checkpoints
          ? { exitCode: EXIT_CODES.sigterm, reason: 'Error' }
          : { exitCode: EXIT_CODES.sigkill, reason: 'Error', message: 'killed at the end of the grace period' };
        const status = terminatedStatus(pod, internalIp(node.name), startedAt, now, end);
        await queue.run(() => this.patchStatus(tracked, status));
      }
      this.devices.release(tracked.nodeName, tracked.uid);
      await queue.run(() =>
        clients.core.deleteNamespacedPod({
          name: tracked.name,
          namespace: tracked.namespace,
          // with a body, the API server reads the options from it and ignores the query string
          body: { gracePeriodSeconds: 0, preconditions: { uid: tracked.uid } },
        }),
      );
    } catch (err) {
      const status = httpStatusOf(err);
      if (status !== 404 && status !== 409) this.options.onError(`removing pod ${tracked.namespace}/${tracked.name}`, err);
    }
  }

  private async writeStatus(tracked: TrackedPod, status: object): Promise<void> {
    try {
      await this.options.queue.run(() => this.patchStatus(tracked, status));
    } catch (err) {
      if (httpStatusOf(err) !== 404) this.options.onError(`writing the status of pod ${tracked.namespace}/${tracked.name}`, err);
    }
  }

  /**
   * One merge patch of the pod's status (phase, conditions and container statuses together, as
   * the kubelet's status manager writes them); the answer is not read: the pod watch brings it.
   */
  private patchStatus(tracked: TrackedPod, status: object): Promise<void> {
    const path = `/api/v1/namespaces/${encodeURIComponent(tracked.namespace)}/pods/${encodeURIComponent(tracked.name)}/status`;
    return kubeJsonRequest<void>(this.options.clients.config, { method: 'PATCH', path, body: { status }, contentType: MERGE_PATCH }, false);
  }
}
