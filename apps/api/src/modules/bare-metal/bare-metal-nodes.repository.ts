import { Injectable } from '@nestjs/common';
import type { BareMetalLeaseState, GpuMode } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { withinQuota, type QuotaGuard } from '../quotas/quota-guard';
import { coveringRows } from '../quotas/quota-coverage';
import { EventsRepository, type NewEvent } from '../events/events.repository';
import { STEPS_IN_FLIGHT, type DbNodeStep } from './lease-states';
import { leaseEvent, nodeStepEvent, type EventLease } from './bare-metal-events';

/** A lease as the provisioner works on it. */
export interface LeaseWork {
  id: string;
  tenantId: string;
  teamId: string;
  name: string;
  gpuModel: string;
  count: number;
  image: string;
  sameLeaf: boolean;
  state: BareMetalLeaseState;
  nodes: { id: string; leaf: { name: string } }[];
}

/** GPU modes a node may be taken in: a MIG layout is cleared on the way (whole GPUs go to bare metal). */
const LEASABLE_MODES: GpuMode[] = ['whole', 'mig'];

export type ClaimOutcome = 'claimed' | 'quota' | 'gone';

/**
 * The worker's side of bare metal: idle nodes, taking a node for a lease (its GPUs held as the
 * team's allocations), each node's step, and giving nodes back. System access: the provisioner
 * works for every tenant (src/tenant-scope.spec.ts).
 */
@Injectable()
export class BareMetalNodesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  /** Leases still to be filled or moving between states, oldest first. */
  leasesAtWork(): Promise<LeaseWork[]> {
    return this.prisma.client.bareMetalLease.findMany({
      where: { state: { not: 'released' } },
      include: { nodes: { select: { id: true, leaf: { select: { name: true } } } } },
      orderBy: { createdAt: 'asc' },
    });
  }

  /**
   * Nodes a lease of `gpuModel` may take now: in the container pool (ready, powered on, container persona,
   * no lease), every GPU of the model, healthy and schedulable (whole or MIG-partitioned with no MIG
   * change in flight: a MIG layout is cleared when the node is taken), and nothing running.
   */
  async idleNodes(gpuModel: string) {
    const rows = await this.prisma.client.node.findMany({
      where: {
        state: 'ready',
        powerState: 'on',
        persona: 'container',
        bareMetalLeaseId: null,
        gpus: { some: { model: gpuModel }, every: { model: gpuModel, mode: { in: LEASABLE_MODES }, health: 'healthy', schedulable: true } },
        allocations: { none: { endedAt: null } },
      },
      select: { id: true, name: true, leaf: { select: { name: true } } },
    });
    return rows.map((n) => ({ id: n.id, name: n.name, leaf: n.leaf.name }));
  }

  /**
   * Takes one idle node for a lease in one transaction: the team's quota re-checked under its
   * lock (every GPU of the node counts), the node and its GPUs locked and re-checked idle, each
   * GPU held by an allocation of the lease (its unique active slot: no job can take it), and the
   * node marked `provisioning`. `gone` when the node or the lease changed meanwhile.
   */
  async claimNode(lease: LeaseWork, nodeId: string, quota: { rows: { gpuModel: string; limit: number }[]; tenantTotal: number | null }): Promise<ClaimOutcome> {
    return this.prisma.client.$transaction(async (tx) => {
      const node = await tx.node.findUnique({ where: { id: nodeId }, include: { gpus: { orderBy: { index: 'asc' } } } });
      if (!node) return 'gone';
      const allocs = node.gpus.map((g, i) => ({
        replica: lease.nodes.length,
        nodeId: node.id,
        gpuId: g.id,
        gpuModel: g.model,
        milli: 1000,
        gpuUnits: 1,
        cpuMilli: i === 0 ? node.cpuMilli : 0,
        memoryMiB: i === 0 ? node.memoryMiB : 0,
      }));
      const guard: QuotaGuard = { limits: coveringRows(quota.rows, lease.gpuModel), tenantTotal: quota.tenantTotal };
      if (!(await withinQuota(tx, lease, allocs, guard))) return 'quota';
      await tx.$queryRaw`SELECT id FROM "BareMetalLease" WHERE id = ${lease.id} FOR UPDATE`;
      await tx.$queryRaw`SELECT id FROM "Node" WHERE id = ${nodeId} FOR UPDATE`;
      await tx.$queryRaw`SELECT id FROM "Gpu" WHERE "nodeId" = ${nodeId} ORDER BY id FOR UPDATE`;
      const fresh = await tx.bareMetalLease.findUnique({ where: { id: lease.id }, select: { state: true, count: true, _count: { select: { nodes: true } } } });
      if (!fresh || fresh.state !== 'pending' || fresh._count.nodes >= fresh.count) return 'gone';
      const now = await tx.node.findUnique({
        where: { id: nodeId },
        include: { gpus: true, _count: { select: { allocations: { where: { endedAt: null } } } } },
      });
      const idle =
        now &&
        now.state === 'ready' &&
        now.powerState === 'on' &&
        now.persona === 'container' &&
        now.bareMetalLeaseId === null &&
        now._count.allocations === 0 &&
        now.gpus.length > 0 &&
        now.gpus.every((g) => g.model === lease.gpuModel && LEASABLE_MODES.includes(g.mode) && g.health === 'healthy' && g.schedulable);
      if (!idle) return 'gone';
      // A MIG layout goes: bare metal takes whole GPUs (the slices are idle; the provisioning step
      // clears the driver's layout before the image is written, as a persona switch to VMs does).
      const mig = now.gpus.filter((g) => g.mode === 'mig');
      if (mig.length) {
        await tx.gpuInstance.deleteMany({ where: { gpuId: { in: mig.map((g) => g.id) } } });
        await tx.gpu.updateMany({ where: { id: { in: mig.map((g) => g.id) } }, data: { mode: 'whole', migChangedAt: new Date(), version: { increment: 1 } } });
      }
      await tx.allocation.createMany({
        data: allocs.map((a) => ({
          tenantId: lease.tenantId,
          teamId: lease.teamId,
          bareMetalLeaseId: lease.id,
          replica: a.replica,
          nodeId: a.nodeId,
          gpuId: a.gpuId,
          gpuModel: a.gpuModel,
          milli: a.milli,
          gpuUnits: a.gpuUnits,
          cpuMilli: a.cpuMilli,
          memoryMiB: a.memoryMiB,
          activeSlot: `${a.gpuId}:whole`,
        })),
      });
      await tx.node.update({ where: { id: nodeId }, data: { bareMetalLeaseId: lease.id, bareMetalState: 'provisioning', bareMetalSince: new Date() } });
      const cleared = mig.length ? `; MIG layout cleared on ${mig.length} GPU(s)` : '';
      await this.events.append(tx, nodeStepEvent(lease, node, 'provisioning', `writing image ${lease.image}${cleared}`));
      return 'claimed';
    });
  }

  lease(leaseId: string) {
    return this.prisma.client.bareMetalLease.findUnique({ where: { id: leaseId }, select: { id: true, tenantId: true, name: true, state: true, count: true } });
  }

  /** Nodes with a step to run through the driver. */
  nodesInFlight() {
    return this.prisma.client.node.findMany({ where: { bareMetalState: { in: [...STEPS_IN_FLIGHT] } }, select: { id: true, bareMetalState: true } });
  }

  node(nodeId: string) {
    return this.prisma.client.node.findUnique({
      where: { id: nodeId },
      select: { id: true, name: true, bareMetalState: true, bareMetalLease: { select: { id: true, tenantId: true, name: true, image: true } } },
    });
  }

  /** Records a finished step (and its event), only if the node is still in it (a release meanwhile wins). */
  async finishStep(node: { id: string; name: string }, lease: EventLease, from: DbNodeStep, to: DbNodeStep): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.node.updateMany({
        where: { id: node.id, bareMetalLeaseId: lease.id, bareMetalState: from },
        data: { bareMetalState: to, bareMetalSince: new Date() },
      });
      if (r.count !== 1) return false;
      await this.events.append(tx, nodeStepEvent(lease, node, to));
      return true;
    });
  }

  /** After the wipe: the node's GPUs are released and the node is back in the pool. */
  async returnToPool(node: { id: string; name: string }, lease: EventLease): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.node.updateMany({
        where: { id: node.id, bareMetalLeaseId: lease.id, bareMetalState: 'deprovisioning' },
        data: { bareMetalLeaseId: null, bareMetalState: null, bareMetalSince: null },
      });
      if (r.count !== 1) return false;
      await tx.allocation.updateMany({
        where: { nodeId: node.id, bareMetalLeaseId: lease.id, endedAt: null },
        data: { endedAt: new Date(), activeSlot: null },
      });
      await this.events.append(tx, nodeStepEvent(lease, node, null));
      return true;
    });
  }

  /** An event on a lease (and its node) written outside a state change: a failed step. */
  async record(event: NewEvent): Promise<void> {
    await this.prisma.client.$transaction((tx) => this.events.append(tx, event));
  }

  /** The steps of the lease's nodes now. */
  async stepsOf(leaseId: string): Promise<DbNodeStep[]> {
    const nodes = await this.prisma.client.node.findMany({ where: { bareMetalLeaseId: leaseId }, select: { bareMetalState: true } });
    return nodes.map((n) => n.bareMetalState).filter((s): s is DbNodeStep => s !== null);
  }

  /** Moves a lease on, guarded by the state it was read in. */
  async setLeaseState(leaseId: string, from: BareMetalLeaseState, to: BareMetalLeaseState, reason: string | null): Promise<boolean> {
    const now = new Date();
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.bareMetalLease.updateMany({
        where: { id: leaseId, state: from },
        data: {
          state: to,
          stateReason: reason,
          ...(to === 'deployed' && from !== 'resuming' ? { deployedAt: now } : {}),
          ...(to === 'released' ? { releasedAt: now } : {}),
        },
      });
      if (r.count !== 1) return false;
      const lease = await tx.bareMetalLease.findUniqueOrThrow({ where: { id: leaseId }, select: { id: true, tenantId: true, name: true } });
      await this.events.append(tx, leaseEvent(lease, to));
      return true;
    });
  }

  /** Why a queued lease still waits (shown on the lease). */
  async setWaitReason(leaseId: string, reason: string): Promise<void> {
    await this.prisma.client.bareMetalLease.updateMany({
      where: { id: leaseId, state: 'pending', OR: [{ stateReason: null }, { stateReason: { not: reason } }] },
      data: { stateReason: reason },
    });
  }

  /** The nodes whose GPUs are all of `gpuModel` (what a lease of that model could ever get). */
  async nodesOfModel(gpuModel: string): Promise<{ leaf: string; gpus: number }[]> {
    const rows = await this.prisma.client.node.findMany({
      where: { gpus: { some: { model: gpuModel }, every: { model: gpuModel } } },
      select: { leaf: { select: { name: true } }, _count: { select: { gpus: true } } },
    });
    return rows.map((n) => ({ leaf: n.leaf.name, gpus: n._count.gpus }));
  }

  /** The team's quota rows and its tenant's total (the claim re-checks them under the team's lock). */
  async quotaOf(lease: { teamId: string; tenantId: string }) {
    const [rows, tenant] = await Promise.all([
      this.prisma.client.quota.findMany({ where: { teamId: lease.teamId } }),
      this.prisma.client.tenant.findUnique({ where: { id: lease.tenantId }, select: { gpuTotal: true } }),
    ]);
    return {
      rows: rows.map((q) => ({ gpuModel: q.gpuModel, limit: Number(q.limit) })),
      tenantTotal: tenant?.gpuTotal == null ? null : Number(tenant.gpuTotal),
    };
  }
}
