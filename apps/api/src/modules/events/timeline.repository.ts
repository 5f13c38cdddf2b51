import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';

/** How many of a node's latest events its page shows. */
export const NODE_EVENTS = 50;

/** A node's timeline as a caller may see it: cluster-wide events, and those of its own jobs and bare-metal leases. */
@Injectable()
export class TimelineRepository {
  constructor(private readonly prisma: PrismaService) {}

  async nodeEvents(scope: TenantScope, nodeId: string) {
    const own = scopeWhere(scope, 'team-rows');
    const rows = await this.prisma.client.event.findMany({
      where: { nodeId, OR: [{ tenantId: null }, { job: { is: own } }, { bareMetalLease: { is: own } }] },
      select: { id: true, type: true, message: true, nodeId: true, createdAt: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: NODE_EVENTS,
    });
    return rows.reverse();
  }
}
