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
  async since(after: { createdAt: Date; id?: string }, limit: number): Promise<FeedEvent[]> {
    return this.byIds((await this.keysSince(after, limit)).map((k) => k.id));
  }

  /**
   * The ids and times of a page of the log (as `since`): the publisher reads the last seconds of
   * the log every second (late commits), and under load most of those events were sent already;
   * it reads the whole rows of the others only (byIds).
   */
  keysSince(after: { createdAt: Date; id?: string }, limit: number): Promise<{ id: string; createdAt: Date }[]> {
    return this.prisma.sql.query<{ id: string; createdAt: Date }>(
      `SELECT e."id", e."createdAt" FROM "Event" e
       WHERE ${after.id ? `(e."createdAt", e."id") > ($1::timestamp(3), $3)` : `e."createdAt" > $1::timestamp(3)`}
       ORDER BY e."createdAt", e."id"
       LIMIT $2`,
      after.id ? [after.createdAt.toISOString(), limit, after.id] : [after.createdAt.toISOString(), limit],
    );
  }

  /** The events `ids` in (createdAt, id) order, each with its job's or lease's team: one typed-SQL statement. */
  async byIds(ids: readonly string[]): Promise<FeedEvent[]> {
    if (!ids.length) return [];
    const rows = await this.prisma.sql.query<Omit<FeedEvent, 'job' | 'bareMetalLease'> & { jobTeamId: string | null; leaseTeamId: string | null }>(
      `SELECT e."id", e."tenantId", e."jobId", e."nodeId", e."type", e."message", e."createdAt",
         j."teamId" AS "jobTeamId", l."teamId" AS "leaseTeamId"
       FROM "Event" e
       LEFT JOIN "Job" j ON j."id" = e."jobId"
       LEFT JOIN "BareMetalLease" l ON l."id" = e."bareMetalLeaseId"
       WHERE e."id" = ANY($1::text[])
       ORDER BY e."createdAt", e."id"`,
      [ids],
    );
    return rows.map(({ jobTeamId, leaseTeamId, ...e }) => ({
      ...e,
      job: jobTeamId ? { teamId: jobTeamId } : null,
      bareMetalLease: leaseTeamId ? { teamId: leaseTeamId } : null,
    }));
  }
}
