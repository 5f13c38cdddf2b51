/**
 * The kubelets' part of node lifecycle: registers every topology node (or adopts the Node a
 * previous run left), renews each node's Lease in kube-node-lease (node-leases.ts), posts the
 * Ready condition's heartbeat, and publishes capacity/allocatable whenever the hardware changes
 * (MIG, persona, GPU health). Renewals and heartbeats are spread over their period, as
 * independent kubelets' are (staggered-round.ts). A node that is down posts nothing.
 */
import type { V1Node } from '@kubernetes/client-node';
import { httpStatusOf, type KubeClients } from '../kube/client';
import { kubernetesSpecs } from '@gantry/driver';
import { STRATEGIC_MERGE_PATCH, kubeJsonRequest } from '@gantry/driver';
import type { WorkQueue } from '../kube/work-queue';
import { adoptNodeState, advertisedResources } from './adopt-node';
import type { EmulatedNode } from './emulated-node';
import { NodeLeases } from './node-leases';
import {
  EMULATED_NODE_LABEL,
  EMULATED_NODES_SELECTOR,
  NODE_LEASE_NAMESPACE,
  nodeCapacity,
  nodeObject,
  readyCondition,
  type NodeObjectOptions,
} from './node-objects';
import { staggeredRound, type StaggeredRound } from './staggered-round';

export interface NodeRegistrarOptions extends NodeObjectOptions {
  clients: KubeClients;
  queue: WorkQueue;
  /**
   * Lease renewals and Ready heartbeats, bounded on their own: each kubelet has its own
   * connection to the API server, so one node's pod status never waits behind a thousand other
   * nodes' renewals (which, on a busy API server, can fill a shared queue).
   */
  heartbeatQueue: WorkQueue;
  /** Lease renewals, as the kubelet's (10 s). */
  leaseRenewSeconds: number;
  /** Ready condition heartbeats in node status (the kubelet's nodeStatusReportFrequency: 5 min). */
  nodeStatusSeconds: number;
  onError: (what: string, err: unknown) => void;
}

export interface RegistrationReport {
  created: number;
  adopted: number;
  /** Until every Node exists (created with labels, capacity and Ready, or adopted). */
  ms: number;
  /** Until the not-ready taints are lifted and every Lease exists too. */
  settledMs: number;
  /** Names of the nodes a previous run (or someone else) had registered. */
  adoptedNodes: string[];
}

export class NodeRegistrar {
  private readonly uids = new Map<string, string>();
  private readonly advertised = new Map<string, Set<string>>();
  private readonly leases: NodeLeases;
  private rounds: StaggeredRound[] = [];
  private stopped = false;

  constructor(
    private readonly nodes: ReadonlyMap<string, EmulatedNode>,
    private readonly options: NodeRegistrarOptions,
  ) {
    this.leases = new NodeLeases(options.clients.config, options.heartbeatQueue, options.leaseDurationSeconds);
  }

  /** Creates the nodes that do not exist, adopts those that do; then their leases. */
  async register(): Promise<RegistrationReport> {
    const started = Date.now();
    const { core } = this.options.clients;
    const existing = new Map<string, V1Node>();
    for (const node of (await core.listNode({ labelSelector: EMULATED_NODES_SELECTOR })).items) existing.set(node.metadata!.name!, node);
    const created: string[] = [];
    const adoptedNodes: string[] = [];
    await this.options.queue.all([...this.nodes.values()], async (node) => {
      const found = existing.get(node.name);
      if (found) {
        adoptNodeState(node, found);
        this.remember(node.name, found);
        adoptedNodes.push(node.name);
        return;
      }
      try {
        this.remember(node.name, await core.createNode({ body: nodeObject(node, this.options, new Date()) }));
        created.push(node.name);
      } catch (err) {
        if (httpStatusOf(err) !== 409) throw err;
        // a Node of that name exists without the emulator's label: take it over as it is
        const other = await core.readNode({ name: node.name });
        adoptNodeState(node, other);
        this.remember(node.name, other);
        const body = { metadata: { labels: { [EMULATED_NODE_LABEL]: 'true' } } };
        await core.patchNode({ name: node.name, body }, this.options.clients.mergePatch); // not through the queue: this task holds a slot
        adoptedNodes.push(node.name);
      }
    });
    const ms = Date.now() - started;
    await this.ensureLeaseNamespace();
    // The API server's admission taints a new Node not-ready; the node lifecycle controller lifts
    // it once the node reports Ready, which these do from the start.
    const untaint = created.map((name) =>
      this.options.queue.run(() => core.patchNode({ name, body: { spec: { taints: null } } }, this.options.clients.mergePatch)),
    );
    await Promise.all([...untaint, this.options.queue.all([...this.nodes.values()], (node) => this.leases.create(node.name, this.uids.get(node.name)))]);
    return { created: created.length, adopted: adoptedNodes.length, ms, settledMs: Date.now() - started, adoptedNodes };
  }

  /** Starts lease renewals and Ready heartbeats; adopted nodes get their status published once. */
  startHeartbeats(): void {
    const up = () => [...this.nodes.values()].filter((n) => !n.down);
    this.rounds = [
      staggeredRound(up, this.options.leaseRenewSeconds * 1000, (node) => {
        if (!this.stopped) this.renewLease(node).catch((err) => this.options.onError(`renewing the lease of node ${node.name}`, err));
      }),
      staggeredRound(up, this.options.nodeStatusSeconds * 1000, (node) => {
        if (!this.stopped) this.postReadyHeartbeat(node);
      }),
    ];
  }

  stop(): void {
    this.stopped = true;
    for (const round of this.rounds) round.stop();
  }

  /** Capacity, allocatable and the Ready condition from the node's current hardware state. */
  async publishStatus(node: EmulatedNode): Promise<void> {
    const previously = this.advertised.get(node.name) ?? new Set<string>();
    const { capacity, allocatable } = nodeCapacity(node, this.options, previously);
    for (const resource of Object.keys(capacity)) if (kubernetesSpecs.isGpuResourceName(resource)) previously.add(resource);
    this.advertised.set(node.name, previously);
    const body = { status: { capacity, allocatable, conditions: [readyCondition(node, new Date())] } };
    await this.options.queue.run(() => this.options.clients.core.patchNodeStatus({ name: node.name, body }, this.options.clients.strategicPatch));
  }

  /** Labels and annotations (merge patch: `null` removes a key). */
  async patchMetadata(nodeName: string, metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> }): Promise<void> {
    await this.options.queue.run(() => this.options.clients.core.patchNode({ name: nodeName, body: { metadata } }, this.options.clients.mergePatch));
  }

  renewLease(node: EmulatedNode): Promise<void> {
    return this.leases.renew(node.name, this.uids.get(node.name));
  }

  private remember(name: string, node: V1Node): void {
    if (node.metadata?.uid) this.uids.set(name, node.metadata.uid);
    this.advertised.set(name, new Set(advertisedResources(node)));
  }

  private postReadyHeartbeat(node: EmulatedNode): void {
    const body = { status: { conditions: [readyCondition(node, new Date())] } };
    this.options.heartbeatQueue
      .run(() =>
        kubeJsonRequest(this.options.clients.config, { method: 'PATCH', path: nodeStatusPath(node.name), body, contentType: STRATEGIC_MERGE_PATCH }, false),
      )
      .catch((err) => this.options.onError(`posting the status of node ${node.name}`, err));
  }

  private async ensureLeaseNamespace(): Promise<void> {
    try {
      await this.options.clients.core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NODE_LEASE_NAMESPACE } } });
    } catch (err) {
      if (httpStatusOf(err) !== 409) throw err;
    }
  }
}

const nodeStatusPath = (name: string) => `/api/v1/nodes/${encodeURIComponent(name)}/status`;
