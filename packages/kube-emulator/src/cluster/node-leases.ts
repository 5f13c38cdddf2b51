/**
 * The kubelets' Leases in kube-node-lease, renewed the way the kubelet's lease controller does it
 * (k8s.io/component-helpers/apimachinery/lease, Kubernetes 1.20): an UPDATE of the Lease the
 * previous renewal got back, its resourceVersion as the precondition, so a renewal is one request
 * and the API server has no patch to apply. Only when that fails (someone else wrote the Lease:
 * 409; it was deleted: 404) does it read the Lease again (or create it) and update that. Like the
 * kubelet's (one loop per node), a node's next renewal waits until its last one has answered: on a
 * busy API server, overlapping renewals would conflict with each other and each cost a read more.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { httpStatusOf } from '../kube/client';
import { kubeJsonRequest } from '@gantry/driver';
import type { WorkQueue } from '../kube/work-queue';
import { NODE_LEASE_NAMESPACE, microTime, nodeLease } from './node-objects';

/** A Lease as the API server sends it (plain JSON: renewTime keeps its microseconds). */
interface LeaseObject {
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
}

const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`;
const leasePath = (nodeName: string) => `${LEASES}/${encodeURIComponent(nodeName)}`;

export class NodeLeases {
  /** The Lease each node's last write got back. */
  private readonly latest = new Map<string, LeaseObject>();
  /** Nodes whose renewal has not answered yet. */
  private readonly renewing = new Set<string>();

  constructor(
    private readonly config: KubeConfig,
    private readonly queue: WorkQueue,
    private readonly leaseDurationSeconds: number,
  ) {}

  /** Creates the node's Lease (owned by its Node when the uid is known); an existing one is kept. */
  async create(nodeName: string, nodeUid: string | undefined): Promise<void> {
    const body = nodeLease(nodeName, nodeUid, { leaseDurationSeconds: this.leaseDurationSeconds }, new Date());
    try {
      this.latest.set(nodeName, await kubeJsonRequest<LeaseObject>(this.config, { method: 'POST', path: LEASES, body }));
    } catch (err) {
      if (httpStatusOf(err) !== 409) throw err;
    }
  }

  /**
   * One renewal: UPDATE of the last Lease seen; read again (or created) and updated when that was
   * stale. Skipped while the node's previous renewal is still waiting for its answer.
   */
  async renew(nodeName: string, nodeUid: string | undefined): Promise<void> {
    if (this.renewing.has(nodeName)) return;
    this.renewing.add(nodeName);
    try {
      await this.renewNow(nodeName, nodeUid);
    } finally {
      this.renewing.delete(nodeName);
    }
  }

  private async renewNow(nodeName: string, nodeUid: string | undefined): Promise<void> {
    const latest = this.latest.get(nodeName);
    if (latest) {
      try {
        return await this.update(nodeName, latest);
      } catch (err) {
        const status = httpStatusOf(err);
        if (status !== 409 && status !== 404) throw err;
        this.latest.delete(nodeName);
      }
    }
    let current: LeaseObject;
    try {
      current = await this.queue.run(() => kubeJsonRequest<LeaseObject>(this.config, { method: 'GET', path: leasePath(nodeName) }));
    } catch (err) {
      if (httpStatusOf(err) !== 404) throw err;
      return this.queue.run(() => this.create(nodeName, nodeUid));
    }
    await this.update(nodeName, current);
  }

  private async update(nodeName: string, base: LeaseObject): Promise<void> {
    const body = { ...base, spec: { ...base.spec, holderIdentity: nodeName, renewTime: microTime(new Date()) } };
    const renewed = await this.queue.run(() => kubeJsonRequest<LeaseObject>(this.config, { method: 'PUT', path: leasePath(nodeName), body }));
    this.latest.set(nodeName, renewed);
  }
}
