import { Injectable } from '@nestjs/common';
import type { JobLogLine as DriverLogLine } from '@gantry/driver';
import { PrismaService } from '../../common/prisma.service';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';

/** A job whose log the worker reads now, from `since` (the newest line it already holds). */
export interface CollectableJob {
  id: string;
  tenantId: string;
  teamId: string;
  since: Date | null;
}

/** A line as stored; `gantry` lines are Gantry's notes about a replica's log (seq -1, one per replica, rewritten). */
export type StoredLine = DriverLogLine | { at: number; replica: number; seq: -1; stream: 'gantry'; text: string };

/**
 * Job logs: the worker appends what the driver gives (a line read twice is stored once: the key is
 * the driver's own (job, replica, seq)); callers read a job's lines through their scope.
 */
@Injectable()
export class JobLogsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Jobs whose replicas may write now: starting, running or suspending, or with an event in the
   * last `recentSeconds` (a job that just ended, was suspended or requeued: its last lines). At
   * most `limit`, in id order after `after` (the collector walks them round by round).
   */
  async collectable(now: Date, recentSeconds: number, limit: number, after = ''): Promise<CollectableJob[]> {
    return this.prisma.sql.query<CollectableJob>(
      `SELECT j.id, j."tenantId", j."teamId",
              (SELECT max(l.at) FROM "JobLogLine" l WHERE l."jobId" = j.id AND l.stream <> 'gantry') AS since
         FROM "Job" j
        WHERE (j.state IN ('starting', 'running', 'suspending')
               OR j.id IN (SELECT DISTINCT e."jobId" FROM "Event" e WHERE e."jobId" IS NOT NULL AND e."createdAt" > $1::timestamp(3)))
          AND j.id > $3
        ORDER BY j.id
        LIMIT $2`,
      [new Date(now.getTime() - recentSeconds * 1000).toISOString(), limit, after],
    );
  }

  /** Appends lines of one job (already stored lines are skipped; Gantry's notes are rewritten). */
  append(job: CollectableJob, lines: readonly StoredLine[]): Promise<number> {
    return this.appendMany([{ job, lines }]);
  }

  /** append() of many jobs in one statement (a collection round); returns the lines stored. */
  async appendMany(batch: readonly { job: CollectableJob; lines: readonly StoredLine[] }[]): Promise<number> {
    const rows = batch.flatMap(({ job, lines }) => lines.map((l) => ({ job, l })));
    if (rows.length === 0) return 0;
    const stored = await this.prisma.sql.query<{ n: number }>(
      `WITH ins AS (
         INSERT INTO "JobLogLine" ("jobId", "tenantId", "teamId", replica, seq, at, stream, text)
         SELECT j, tn, tm, r, s::bigint, a::timestamp(3), st, t
           FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(j, tn, tm, r, s, a, st, t)
         ON CONFLICT ("jobId", replica, seq) DO UPDATE SET text = EXCLUDED.text, at = EXCLUDED.at
           WHERE "JobLogLine".stream = 'gantry'
         RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        rows.map((x) => x.job.id),
        rows.map((x) => x.job.tenantId),
        rows.map((x) => x.job.teamId),
        rows.map((x) => x.l.replica),
        rows.map((x) => String(x.l.seq)),
        rows.map((x) => new Date(x.l.at).toISOString()),
        rows.map((x) => x.l.stream),
        rows.map((x) => x.l.text.replace(/\0/g, '').slice(0, 8000)),
      ],
    );
    return stored[0]?.n ?? 0;
  }

  /** The newest `tail` lines of the job at or after `since`, oldest first; `truncated` when more matched. */
  async read(scope: TenantScope, jobId: string, q: { tail: number; since?: Date }) {
    const rows = await this.prisma.client.jobLogLine.findMany({
      where: { AND: [scopeWhere(scope, 'team-rows'), { jobId }, q.since ? { at: { gte: q.since } } : {}] },
      orderBy: [{ at: 'desc' }, { replica: 'desc' }, { seq: 'desc' }],
      take: q.tail + 1,
      select: { at: true, replica: true, seq: true, stream: true, text: true },
    });
    return { lines: rows.slice(0, q.tail).reverse(), truncated: rows.length > q.tail };
  }
}
