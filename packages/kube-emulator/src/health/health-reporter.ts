/**
 * Injected faults and recoveries, applied to the emulated hardware and reported to Kubernetes
 * the way NVSentinel and the node lifecycle controller would (fault-reports.ts):
 *
 *   xid        a fatal Xid: GPU unhealthy (allocatable drops), condition SysLogsXIDError=True;
 *              a process-fatal Xid also fails the pods on that GPU. An application Xid: a
 *              Warning Event SysLogsXIDError only (the GPU stays healthy)
 *   nic-down   condition InfiniBandStateCheck=True
 *   node-down  heartbeats stop, Ready=Unknown, taints node.kubernetes.io/unreachable, its pods fail (NodeLost)
 *   latent     a GPU defect idle checks miss: nothing is reported and the GPU stays allocatable; a
 *              burn-in pod on it fails (the kubelet's burn-in, burn-in-findings.ts)
 *   recover    the node, its NIC and its GPUs (or only gpuIndex) come back; conditions go False, taints
 *              go; a latent defect goes too (the part was replaced)
 *
 * repair() is a GPU reset or a node reboot (the incident loop's remediation): what recover does,
 * except that a latent defect survives it.
 */
import { xidEffect, type FaultInjection } from '@gantry/driver';
import type { V1Node } from '@kubernetes/client-node';
import { UNHEALTHY_GPUS_ANNOTATION } from '../cluster/adopt-node';
import type { EmulatedNode } from '../cluster/emulated-node';
import type { NodeRegistrar } from '../cluster/node-registrar';
import { httpStatusOf, type KubeClients } from '../kube/client';
import type { WorkQueue } from '../kube/work-queue';
import type { Kubelet } from '../kubelet/kubelet';
import { faultTaints, mergeTaints, nicCondition, nodeEvent, xidCondition, xidEvent, xidName } from './fault-reports';

/** Injected when a fault names no Xid, as in the simulated driver: the GPU has fallen off the bus. */
export const DEFAULT_FAULT_XID = 79;

export class FaultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FaultError';
  }
}

export interface HealthReporterOptions {
  clients: KubeClients;
  queue: WorkQueue;
  registrar: NodeRegistrar;
  kubelet: Kubelet;
  latest: (name: string) => V1Node | undefined;
}

export class HealthReporter {
  constructor(
    private readonly nodes: ReadonlyMap<string, EmulatedNode>,
    private readonly options: HealthReporterOptions,
  ) {}

  async inject(fault: FaultInjection): Promise<void> {
    const node = this.nodes.get(fault.nodeName);
    if (!node) throw new FaultError(`no emulated node named ${fault.nodeName}`);
    switch (fault.kind) {
      case 'xid':
        return this.xid(node, fault.gpuIndex, fault.xid ?? DEFAULT_FAULT_XID);
      case 'nic-down':
        node.nicDown = true;
        await this.reportConditions(node, [nicCondition(node, new Date())]);
        return;
      case 'node-down':
        if (node.down) return;
        node.down = true;
        await this.options.registrar.publishStatus(node);
        await this.syncTaints(node);
        this.options.kubelet.loseNode(node.name);
        await this.event(node, 'Normal', 'NodeNotReady', `Node ${node.name} status is now: NodeNotReady`, 'node-controller');
        return;
      case 'recover':
        return this.recover(node, fault.gpuIndex, { partReplaced: true });
      case 'latent':
        return this.latent(node, fault.gpuIndex);
      case 'power-up-fail':
        // the emulator has no power hook to fail: on the simulated cluster only
        throw new FaultError(`the emulator does not inject ${fault.kind} faults (the simulated cluster does)`);
    }
  }

  /** A GPU reset (gpuIndex) or a node reboot: Xids and a down node or NIC clear, latent defects stay. */
  async repair(nodeName: string, gpuIndex?: number): Promise<void> {
    const node = this.nodes.get(nodeName);
    if (!node) throw new FaultError(`no emulated node named ${nodeName}`);
    return this.recover(node, gpuIndex, { partReplaced: false });
  }

  /** Nothing to report: an idle check passes. Only load (a burn-in) shows it. */
  private latent(node: EmulatedNode, gpuIndex: number | undefined): Promise<void> {
    if (gpuIndex === undefined) throw new FaultError('a latent fault needs gpuIndex');
    const gpu = node.gpus[gpuIndex];
    if (!gpu) throw new FaultError(`node ${node.name} has no GPU ${gpuIndex} (it has ${node.gpus.length})`);
    gpu.latentFault = true;
    return Promise.resolve();
  }

  private async xid(node: EmulatedNode, gpuIndex: number | undefined, xid: number): Promise<void> {
    if (gpuIndex === undefined) throw new FaultError('an xid fault needs gpuIndex');
    const gpu = node.gpus[gpuIndex];
    if (!gpu) throw new FaultError(`node ${node.name} has no GPU ${gpuIndex} (it has ${node.gpus.length})`);
    const effect = xidEffect(xid);
    if (!effect.gpuUnhealthy) {
      const body = xidEvent(node, gpu, xid, new Date(), this.options.latest(node.name)?.metadata?.uid);
      await this.options.queue.run(() => this.options.clients.core.createNamespacedEvent({ namespace: 'default', body }));
    }
    if (effect.killsProcesses) this.options.kubelet.killPodsOnGpu(node.name, gpu.index, `CUDA error: Xid ${xid} (${xidName(xid)}) on GPU ${gpu.index}`);
    if (!effect.gpuUnhealthy) return;
    gpu.healthy = false;
    gpu.lastXid = xid;
    await this.recordUnhealthyGpus(node);
    await this.reportConditions(node, [xidCondition(node, new Date())]);
    await this.options.registrar.publishStatus(node);
  }

  private async recover(node: EmulatedNode, gpuIndex: number | undefined, how: { partReplaced: boolean }): Promise<void> {
    const gpus = gpuIndex === undefined ? node.gpus : node.gpus.filter((g) => g.index === gpuIndex);
    if (gpuIndex !== undefined && gpus.length === 0) throw new FaultError(`node ${node.name} has no GPU ${gpuIndex}`);
    for (const gpu of gpus) {
      gpu.healthy = true;
      if (how.partReplaced) gpu.latentFault = false;
    }
    const wasDown = node.down;
    node.down = false;
    node.nicDown = false;
    const now = new Date();
    await this.recordUnhealthyGpus(node);
    await this.reportConditions(node, [xidCondition(node, now), nicCondition(node, now)]);
    await this.options.registrar.publishStatus(node);
    await this.syncTaints(node);
    if (wasDown) {
      await this.options.registrar.renewLease(node);
      this.options.kubelet.nodeBack(node.name);
      await this.event(node, 'Normal', 'NodeReady', `Node ${node.name} status is now: NodeReady`, 'kubelet');
    }
  }

  private async reportConditions(node: EmulatedNode, conditions: object[]): Promise<void> {
    const { core, strategicPatch } = this.options.clients;
    await this.options.queue.run(() => core.patchNodeStatus({ name: node.name, body: { status: { conditions } } }, strategicPatch));
  }

  private async recordUnhealthyGpus(node: EmulatedNode): Promise<void> {
    const unhealthy = node.gpus.filter((g) => !g.healthy).map((g) => g.index);
    await this.options.registrar.patchMetadata(node.name, { annotations: { [UNHEALTHY_GPUS_ANNOTATION]: unhealthy.length > 0 ? unhealthy.join(',') : null } });
  }

  /** Replaces the emulator's fault taints, keeping everyone else's; retries on a write conflict. */
  async syncTaints(node: EmulatedNode): Promise<void> {
    const { core, mergePatch } = this.options.clients;
    for (let attempt = 0; ; attempt++) {
      const current = await this.options.queue.run(() => core.readNode({ name: node.name }));
      const taints = mergeTaints(current.spec?.taints ?? [], faultTaints(node));
      const body = { metadata: { resourceVersion: current.metadata?.resourceVersion }, spec: { taints: taints.length > 0 ? taints : null } };
      try {
        await this.options.queue.run(() => core.patchNode({ name: node.name, body }, mergePatch));
        return;
      } catch (err) {
        if (httpStatusOf(err) !== 409 || attempt >= 5) throw err;
      }
    }
  }

  private async event(node: EmulatedNode, type: 'Normal' | 'Warning', reason: string, message: string, component: string): Promise<void> {
    const body = nodeEvent({ node, nodeUid: this.options.latest(node.name)?.metadata?.uid, type, reason, message, component, now: new Date() });
    await this.options.queue.run(() => this.options.clients.core.createNamespacedEvent({ namespace: 'default', body }));
  }
}
