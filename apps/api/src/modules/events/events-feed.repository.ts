import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

export interface FeedEvent {
  id: string;
  tenantId: string | null;
  jobId: string | null;
  nodeId: string | null;
  type: string;
  message: string;
  createdAt: Date;
  job: { teamId: string } | null;
  bareMetalLease: { teamId: string } | null;
}

/** Reads the event log in creation order for the live feed (the publisher is the platform: no tenant filter). */
@Injectable()
export class EventsFeedRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Up to `limit` events after `after` in (createdAt, id) order: a page of the log. `after.id`
   * continues a page that ended inside one millisecond (keyset paging: no event is skipped or read twice).
   */
  since(after: { createdAt: Date; id?: string }, limit: number): Promise<FeedEvent[]> {
    const where = after.id
      ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] }
      : { createdAt: { gt: after.createdAt } };
    return this.prisma.client.event.findMany({
      where,
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit,
      select: {
        id: true,
        tenantId: true,
        jobId: true,
        nodeId: true,
        type: true,
        message: true,
        createdAt: true,
        job: { select: { teamId: true } },
        bareMetalLease: { select: { teamId: true } },
      },
    });
  }
}
