import { Injectable } from '@nestjs/common';
import type { BareMetalLeaseState } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import type { DbNodeStep } from './lease-states';

export const leaseWithNodes = {
  nodes: { select: { id: true, name: true, bareMetalState: true, bareMetalSince: true, leaf: { select: { name: true } }, _count: { select: { gpus: true } } } },
  allocations: { where: { endedAt: null }, select: { gpuUnits: true } },
} as const;

/** Bare-metal leases as tenants see and change them: every read and write through the caller's scope. */
@Injectable()
export class BareMetalLeasesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(
    scope: TenantScope & { kind: 'tenant' },
    data: { teamId: string; name: string; gpuModel: string; count: number; image: string; sameLeaf: boolean },
  ) {
    assertCovers(scope, { tenantId: scope.tenantId, teamId: data.teamId }, `team ${data.teamId}`);
    return this.prisma.client.bareMetalLease.create({ data: { tenantId: scope.tenantId, ...data }, include: leaseWithNodes });
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
      await tx.node.updateMany({
        where: { bareMetalLeaseId: id, ...(change.nodeFrom ? { bareMetalState: { in: change.nodeFrom } } : {}) },
        data: { bareMetalState: change.nodeTo, bareMetalSince: new Date() },
      });
      return true;
    });
  }
}
