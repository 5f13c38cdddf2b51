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
}

/** Reads the event log in creation order for the live feed (the publisher is the platform: no tenant filter). */
@Injectable()
export class EventsFeedRepository {
  constructor(private readonly prisma: PrismaService) {}

  since(after: Date, limit: number): Promise<FeedEvent[]> {
    return this.prisma.client.event.findMany({
      where: { createdAt: { gt: after } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: limit,
      select: { id: true, tenantId: true, jobId: true, nodeId: true, type: true, message: true, createdAt: true, job: { select: { teamId: true } } },
    });
  }
}
