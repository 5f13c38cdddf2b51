/**
 * The AMD GPU Operator's Device Config Manager on every emulated AMD node: when the node's
 * `dcm.amd.com/gpu-config-profile` names a profile not applied yet (or the state label was removed
 * to ask again), it waits the apply delay, reads the profile from its ConfigMap (`config.json`),
 * and either re-partitions the GPUs (the device plugin's new `amd.com/*` capacity, the node
 * labeller's `amd.com/compute-memory-partition`, state `success`, Event SuccessfullyPartitioned)
 * or reports `failure` with a Warning Event saying why: no ConfigMap or profile, a profile DCM's
 * checks refuse (GPU counts, mixed memory modes, a mode pair the catalog does not allow), a node
 * not tainted `amd-dcm=up:NoExecute`, or a GPU whose mode would change while a pod runs on it.
 */
import { kubernetesSpecs, sameMigLayout, type MigSliceSpec } from '@gantry/driver';
import type { V1Node } from '@kubernetes/client-node';
import type { EmulatedNode } from '../cluster/emulated-node';
import type { NodeRegistrar } from '../cluster/node-registrar';
import { amdLabels } from '../cluster/node-objects';
import { nodeEvent } from '../health/fault-reports';
import { httpStatusOf, type KubeClients } from '../kube/client';
import type { WorkQueue } from '../kube/work-queue';
import type { Kubelet } from '../kubelet/kubelet';

const { AMD_GPU_LABELS, DCM_TAINT, gpuVendorOfLabels, parseDcmConfig, planDcmProfile } = kubernetesSpecs;

export interface DeviceConfigManagerOptions {
  clients: KubeClients;
  queue: WorkQueue;
  registrar: NodeRegistrar;
  kubelet: Kubelet;
  /** Where DCM reads its profiles (the driver's KUBERNETES_DRIVER_DEFAULTS.dcmConfigMap). */
  configMap: { namespace: string; name: string; key: string };
  applySeconds: number;
  onError: (what: string, err: unknown) => void;
}

export class DeviceConfigManager {
  /** Profile last settled per node (success or failure): not applied again until the label changes or the state goes. */
  private readonly settled = new Map<string, string>();
  private readonly inFlight = new Map<string, { profile: string; timer: NodeJS.Timeout }>();
  /** Nodes being partitioned now: their state label is not written yet. */
  private readonly applying = new Set<string>();
  private stopped = false;

  constructor(
    private readonly nodes: ReadonlyMap<string, EmulatedNode>,
    private readonly latest: (name: string) => V1Node | undefined,
    private readonly options: DeviceConfigManagerOptions,
  ) {}

  /** Called with every change to an emulated Node. */
  onNode(object: V1Node): void {
    const node = this.nodes.get(object.metadata?.name ?? '');
    const labels = object.metadata?.labels ?? {};
    if (!node || node.gpus.length === 0 || this.stopped || gpuVendorOfLabels(labels) !== 'amd') return;
    const profile = labels[AMD_GPU_LABELS.configProfile];
    if (!profile || this.applying.has(node.name)) return;
    const asked = profile !== this.settled.get(node.name) || labels[AMD_GPU_LABELS.configProfileState] === undefined;
    const running = this.inFlight.get(node.name);
    if (!asked || running?.profile === profile || node.down) return;
    if (running) clearTimeout(running.timer);
    this.settled.delete(node.name);
    const timer = setTimeout(() => void this.apply(node, profile), this.options.applySeconds * 1000);
    this.inFlight.set(node.name, { profile, timer });
  }

  stop(): void {
    this.stopped = true;
    for (const { timer } of this.inFlight.values()) clearTimeout(timer);
  }

  private async apply(node: EmulatedNode, profile: string): Promise<void> {
    this.inFlight.delete(node.name);
    const object = this.latest(node.name);
    if (this.stopped || !object || object.metadata?.labels?.[AMD_GPU_LABELS.configProfile] !== profile) return;
    this.settled.set(node.name, profile);
    this.applying.add(node.name);
    try {
      await this.partition(node, object, profile);
    } finally {
      this.applying.delete(node.name);
    }
    // asked for another profile meanwhile?
    const now = this.latest(node.name);
    if (now && now.metadata?.labels?.[AMD_GPU_LABELS.configProfile] !== profile) this.onNode(now);
  }

  private async partition(node: EmulatedNode, object: V1Node, profile: string): Promise<void> {
    try {
      const file = parseDcmConfig(await this.readConfigFile());
      const plan = planDcmProfile(file, profile, node.gpus[0]!.model, node.gpus.length);
      const refusal = !plan.ok ? plan.reason : (notTainted(object) ?? this.busyGpu(node, plan.layouts));
      if (plan.ok && refusal === undefined) {
        for (const gpu of node.gpus) if (plan.layouts[gpu.index]) gpu.migLayout = plan.layouts[gpu.index]!;
        await this.options.registrar.publishStatus(node);
        const partition = amdLabels(node)[AMD_GPU_LABELS.computeMemoryPartition] ?? null;
        await this.finish(node, 'success', 'SuccessfullyPartitioned', `profile ${profile}: all GPUs were successfully partitioned`, partition);
      } else {
        await this.finish(node, 'failure', refusal!.split(':')[0]!, `profile ${profile}: partition failed with reason: ${refusal}`);
      }
    } catch (err) {
      this.options.onError(`device-config-manager on node ${node.name}`, err);
      await this.finish(node, 'failure', 'PartitionFailure', `profile ${profile}: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /** Why the change cannot happen now: a pod runs on a GPU whose mode changes (amd-smi: device busy). */
  private busyGpu(node: EmulatedNode, layouts: Record<number, MigSliceSpec[]>): string | undefined {
    for (const gpu of node.gpus) {
      if (!layouts[gpu.index] || sameMigLayout(gpu.migLayout, layouts[gpu.index]!)) continue;
      const pods = this.options.kubelet.devices.podsOnGpu(node.name, gpu.index);
      if (pods.length > 0) return `PartitionFailure: GPU ${gpu.index} is busy with ${pods.length} pod(s) (Device busy)`;
    }
    return undefined;
  }

  private async readConfigFile(): Promise<string | undefined> {
    const { namespace, name, key } = this.options.configMap;
    try {
      const configMap = await this.options.clients.core.readNamespacedConfigMap({ namespace, name });
      return configMap.data?.[key];
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  /** The state label (and the node labeller's mode label after a success), and DCM's Event. */
  private async finish(node: EmulatedNode, state: 'success' | 'failure', reason: string, message: string, partition?: string | null): Promise<void> {
    const labels: Record<string, string | null> = { [AMD_GPU_LABELS.configProfileState]: state };
    if (partition !== undefined) labels[AMD_GPU_LABELS.computeMemoryPartition] = partition;
    const type = state === 'success' ? 'Normal' : 'Warning';
    const body = nodeEvent({
      node,
      nodeUid: this.latest(node.name)?.metadata?.uid,
      type,
      reason,
      message,
      component: 'amd-device-config-manager',
      now: new Date(),
    });
    try {
      await this.options.registrar.patchMetadata(node.name, { labels });
      await this.options.queue.run(() => this.options.clients.core.createNamespacedEvent({ namespace: 'default', body }));
    } catch (err) {
      this.options.onError(`reporting ${AMD_GPU_LABELS.configProfileState}=${state} on node ${node.name}`, err);
    }
  }
}

/** DCM partitions only a node its docs' taint has emptied (its Event NodeNotTaintedBeforeParition). */
function notTainted(node: V1Node): string | undefined {
  const tainted = (node.spec?.taints ?? []).some((t) => t.key === DCM_TAINT.key && t.value === DCM_TAINT.value && t.effect === DCM_TAINT.effect);
  return tainted ? undefined : `NodeNotTaintedBeforeParition: the node is not tainted ${DCM_TAINT.key}=${DCM_TAINT.value}:${DCM_TAINT.effect}`;
}
