import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLUSTER_DRIVER, type ClusterDriver } from '../../driver/driver.provider';
import { QueuesService } from '../../queues/queues.service';
import type { BareMetalOperation } from '@gantry/driver';
import { BareMetalNodesRepository, type LeaseWork } from './bare-metal-nodes.repository';
import { nodeStepFailedEvent } from './bare-metal-events';
import { pickIdleNodes, settledLeaseState, STEPS_IN_FLIGHT, type DbNodeStep } from './lease-states';

/** Each step the driver runs: its operation and the node's step once it is done (null: back in the pool). */
const STEPS: Partial<Record<DbNodeStep, { action: BareMetalOperation['action']; then: DbNodeStep | null }>> = {
  provisioning: { action: 'provision', then: 'deployed' },
  powering_off: { action: 'power-off', then: 'powered_off' },
  powering_on: { action: 'power-on', then: 'deployed' },
  deprovisioning: { action: 'deprovision', then: null },
};

export interface BareMetalTickReport {
  claimed: { leaseId: string; nodeId: string }[];
  steps: number;
}

/**
 * The worker's bare-metal provisioner (docs/bare-metal.md). Its tick fills queued leases with
 * idle nodes, one by one as they become idle (look-ahead: a node taken while the rest of the set
 * is still busy is provisioned at once and held out of the container pool), sends each node's
 * pending step to the `bare-metal` queue, and moves leases on as their nodes finish. A step runs
 * through the driver and is recorded only if the node is still in it.
 */
@Injectable()
export class BareMetalProvisioner {
  private readonly logger = new Logger('bare-metal');

  constructor(
    private readonly nodes: BareMetalNodesRepository,
    private readonly queues: QueuesService,
    @Inject(CLUSTER_DRIVER) private readonly driver: ClusterDriver,
  ) {}

  async tick(): Promise<BareMetalTickReport> {
    const claimed: BareMetalTickReport['claimed'] = [];
    const leases = await this.nodes.leasesAtWork();
    const taken = new Set<string>();
    for (const lease of leases.filter((l) => l.state === 'pending')) {
      for (const nodeId of await this.fill(lease, taken)) claimed.push({ leaseId: lease.id, nodeId });
    }
    const inFlight = await this.nodes.nodesInFlight();
    for (const n of inFlight) await this.queues.bareMetal({ action: 'step', nodeId: n.id, step: n.bareMetalState! });
    for (const lease of leases) await this.settle(lease.id, lease);
    return { claimed, steps: inFlight.length };
  }

  /** Takes idle nodes for a queued lease (the team's quota permitting); says why it still waits. */
  private async fill(lease: LeaseWork, taken: Set<string>): Promise<string[]> {
    const need = lease.count - lease.nodes.length;
    if (need <= 0) return [];
    const idle = (await this.nodes.idleNodes(lease.gpuModel)).filter((n) => !taken.has(n.id));
    const picks = pickIdleNodes(idle, { need, sameLeaf: lease.sameLeaf, heldLeaves: lease.nodes.map((n) => n.leaf.name) });
    const quota = await this.nodes.quotaOf(lease);
    const got: string[] = [];
    let refused = false;
    for (const node of picks) {
      const outcome = await this.nodes.claimNode(
        { ...lease, nodes: [...lease.nodes, ...got.map((id) => ({ id, leaf: { name: node.leaf } }))] },
        node.id,
        quota,
      );
      if (outcome === 'quota') {
        refused = true;
        break;
      }
      if (outcome !== 'claimed') continue;
      taken.add(node.id);
      got.push(node.id);
      this.logger.log(`lease ${lease.id}: node ${node.name} taken as bare metal (provisioning ${lease.image})`);
      await this.queues.bareMetal({ action: 'step', nodeId: node.id, step: 'provisioning' });
    }
    const held = lease.nodes.length + got.length;
    if (held < lease.count) {
      const why = refused
        ? `waiting for quota: the team's ${lease.gpuModel} GPUs in use leave no room for another node (${held} of ${lease.count} held)`
        : `waiting for idle ${lease.gpuModel} nodes${lease.sameLeaf ? ' under one leaf' : ''} (${held} of ${lease.count} held, provisioning as they free up)`;
      await this.nodes.setWaitReason(lease.id, why);
    }
    if (got.length) await this.settle(lease.id, { ...lease, state: 'pending' });
    return got;
  }

  /** Runs one node's step through the driver and records it. */
  async step(nodeId: string): Promise<void> {
    const node = await this.nodes.node(nodeId);
    if (!node?.bareMetalLease || !node.bareMetalState || !STEPS_IN_FLIGHT.includes(node.bareMetalState)) return;
    const step = STEPS[node.bareMetalState]!;
    const lease = node.bareMetalLease;
    if (!this.driver.bareMetal) throw new Error(`the ${this.driver.name} driver cannot provision bare metal`);
    const op: BareMetalOperation =
      step.action === 'provision' ? { action: 'provision', leaseId: lease.id, image: lease.image } : { action: step.action, leaseId: lease.id };
    try {
      if (op.action === 'provision') await this.wholeGpus(node.name);
      await this.driver.bareMetal(node.name, op);
    } catch (e) {
      // The queue retries the step; the lease and the node show each failure meanwhile.
      await this.nodes.record(nodeStepFailedEvent(lease, node, node.bareMetalState, e instanceof Error ? e.message : String(e)));
      throw e;
    }
    const recorded = step.then === null ? await this.nodes.returnToPool(node, lease) : await this.nodes.finishStep(node, lease, node.bareMetalState, step.then);
    if (recorded) this.logger.log(`node ${node.name}: ${step.action} done (lease ${lease.id})`);
    if (recorded && step.then === null) await this.queues.requestSchedule(`node ${node.name} back from bare metal`);
    await this.settle(lease.id);
  }

  /**
   * Before the image is written: MIG off on the node's GPUs on the cluster (the database already
   * says whole since the node was taken). The driver's layout counts, as in a persona switch.
   */
  private async wholeGpus(nodeName: string): Promise<void> {
    const seen = await this.driver.discoverNode(nodeName);
    for (const gpu of seen?.gpus ?? []) if (gpu.migLayout?.length) await this.driver.applyMigLayout(nodeName, gpu.index, []);
  }

  /** Moves the lease on once its nodes' steps say so. */
  private async settle(leaseId: string, read?: { state: LeaseWork['state']; count: number }): Promise<void> {
    const lease = read ?? (await this.nodes.lease(leaseId));
    if (!lease) return;
    const to = settledLeaseState(lease, await this.nodes.stepsOf(leaseId));
    if (to && to !== lease.state) await this.nodes.setLeaseState(leaseId, lease.state, to, null);
  }
}
