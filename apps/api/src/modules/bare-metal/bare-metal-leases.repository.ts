import { Injectable } from '@nestjs/common';
import type { BareMetalLeaseState, Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { EventsRepository } from '../events/events.repository';
import type { DbNodeStep } from './lease-states';
import { leaseEvent, nodeStepEvent } from './bare-metal-events';

/** How many of a lease's latest events it is served with. */
export const LEASE_EVENTS = 30;

export const leaseWithNodes = {
  nodes: { select: { id: true, name: true, bareMetalState: true, bareMetalSince: true, leaf: { select: { name: true } }, _count: { select: { gpus: true } } } },
  allocations: { where: { endedAt: null }, select: { gpuUnits: true } },
  /** The lease's latest events (its timeline; the console shows them on the lease's row). */
  events: {
    select: { id: true, type: true, message: true, nodeId: true, createdAt: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] as Prisma.EventOrderByWithRelationInput[],
    take: LEASE_EVENTS,
  },
} as const;

/** Bare-metal leases as tenants see and change them: every read and write through the caller's scope. */
@Injectable()
export class BareMetalLeasesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  async create(
    scope: TenantScope & { kind: 'tenant' },
    data: { teamId: string; name: string; gpuModel: string; count: number; image: string; sameLeaf: boolean },
  ) {
    assertCovers(scope, { tenantId: scope.tenantId, teamId: data.teamId }, `team ${data.teamId}`);
    return this.prisma.client.$transaction(async (tx) => {
      const row = await tx.bareMetalLease.create({ data: { tenantId: scope.tenantId, ...data }, include: leaseWithNodes });
      await this.events.append(tx, leaseEvent(row, 'pending', `${data.count} ${data.gpuModel} node(s), image ${data.image}`));
      return row;
    });
  }

  list(scope: TenantScope, filter: { teamId?: string }) {
    return this.prisma.client.bareMetalLease.findMany({
      where: { AND: [scopeWhere(scope, 'team-rows'), filter.teamId ? { teamId: filter.teamId } : {}] },
      include: leaseWithNodes,
      orderBy: { createdAt: 'desc' },
      take: 200,
    });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.client.bareMetalLease.findFirst({ where: { AND: [scopeWhere(scope, 'team-rows'), { id }] }, include: leaseWithNodes });
  }

  /**
   * Moves a lease from one of `from` to `to` and its nodes from `nodeFrom` (any step when
   * undefined) to `nodeTo`, in one transaction guarded by the lease's state. False when the
   * lease is not in one of `from` (or not the caller's).
   */
  async request(
    scope: TenantScope,
    id: string,
    change: { from: BareMetalLeaseState[]; to: BareMetalLeaseState; reason: string; nodeFrom?: DbNodeStep[]; nodeTo: DbNodeStep },
  ): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const moved = await tx.bareMetalLease.updateMany({
        where: { AND: [scopeWhere(scope, 'team-rows'), { id, state: { in: change.from } }] },
        data: { state: change.to, stateReason: change.reason },
      });
      if (moved.count !== 1) return false;
      const lease = await tx.bareMetalLease.findUniqueOrThrow({ where: { id }, select: { id: true, tenantId: true, name: true } });
      const nodes = await tx.node.findMany({
        where: { bareMetalLeaseId: id, ...(change.nodeFrom ? { bareMetalState: { in: change.nodeFrom } } : {}) },
        select: { id: true, name: true },
      });
      await tx.node.updateMany({ where: { id: { in: nodes.map((n) => n.id) } }, data: { bareMetalState: change.nodeTo, bareMetalSince: new Date() } });
      await this.events.append(tx, [leaseEvent(lease, change.to), ...nodes.map((n) => nodeStepEvent(lease, n, change.nodeTo))]);
      return true;
    });
  }
}
