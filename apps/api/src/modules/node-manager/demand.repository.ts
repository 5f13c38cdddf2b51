import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** Planning inputs of the node manager's MIG and persona planners: the pending work no node took. */
@Injectable()
export class DemandRepository {
  constructor(private readonly prisma: PrismaService) {}

  private get db() {
    return this.prisma.client;
  }

  /** Pending jobs (quota-held jobs excluded), `tried` once a cycle failed to place them: demand for planners. */
  async unplacedPendingJobs() {
    const rows = await this.db.job.findMany({
      where: { state: 'pending' },
      select: { id: true, kind: true, replicas: true, resources: true, reasons: true, createdAt: true },
      orderBy: { createdAt: 'asc' },
      take: 5000,
    });
    return rows
      .map((r) => {
        const codes = ((r.reasons as { code?: string }[] | null) ?? []).map((x) => x.code);
        return { ...r, quotaHeld: codes.includes('quota_limit'), tried: !codes.includes('queued') };
      })
      .filter((r) => !r.quotaHeld);
  }
}
