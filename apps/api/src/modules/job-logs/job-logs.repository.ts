import { Injectable } from '@nestjs/common';
import type { JobLogLine as DriverLogLine } from '@gantry/driver';
import { PrismaService } from '../../common/prisma.service';
import { scopeValues, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { newId } from '../../common/ids';

/** A job whose log the worker reads now, from `since` (the newest line it already holds). */
export interface CollectableJob {
  id: string;
  tenantId: string;
  teamId: string;
  since: Date | null;
  /** Per replica (as a string key), the newest seq already stored: a round stores only what follows. */
  stored: Record<string, number> | null;
}

/** A line as stored; `gantry` lines are Gantry's notes about a replica's log (seq -1, one per replica, rewritten). */
export type StoredLine = DriverLogLine | { at: number; replica: number; seq: -1; stream: 'gantry'; text: string };

/** A line as read back. */
export interface ReadLine {
  at: Date;
  replica: number;
  seq: bigint;
  stream: string;
  text: string;
}

/** A chunk's line on disk: [at ms, seq, stream, text]. */
type ChunkLine = [number, number, string, string];

const MAX_TEXT = 8000;

function clean(text: string): string {
  return text.replace(/\0/g, '').slice(0, MAX_TEXT);
}

/**
 * Job logs: the worker appends what the driver gives, one chunk per replica and round (a line
 * read twice is stored once: a round keeps only the lines past the replica's newest stored seq,
 * the driver's own order); callers read a job's lines through their scope. Lines stored one row
 * each before chunks (JobLogLine), and Gantry's notes, are read with the chunks.
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
              GREATEST((SELECT max(c."lastAt") FROM "JobLogChunk" c WHERE c."jobId" = j.id),
                       (SELECT max(l.at) FROM "JobLogLine" l WHERE l."jobId" = j.id AND l.stream <> 'gantry')) AS since,
              (SELECT jsonb_object_agg(s.replica, s.seq) FROM (
                 SELECT replica, max(seq) AS seq FROM (
                   SELECT c.replica, c."lastSeq" AS seq FROM "JobLogChunk" c WHERE c."jobId" = j.id
                   UNION ALL
                   SELECT l.replica, l.seq FROM "JobLogLine" l WHERE l."jobId" = j.id AND l.stream <> 'gantry'
                 ) x GROUP BY replica) s) AS stored
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

  /**
   * append() of many jobs (a collection round): the replicas' new lines as one chunk each, in one
   * statement; Gantry's notes in a second, when there are any. Returns the lines stored.
   */
  async appendMany(batch: readonly { job: CollectableJob; lines: readonly StoredLine[] }[]): Promise<number> {
    const chunks: { job: CollectableJob; replica: number; lines: ChunkLine[] }[] = [];
    const notes: { job: CollectableJob; line: StoredLine }[] = [];
    for (const { job, lines } of batch) {
      const byReplica = new Map<number, ChunkLine[]>();
      for (const l of lines) {
        if (l.stream === 'gantry') {
          notes.push({ job, line: l });
          continue;
        }
        if (l.seq <= (job.stored?.[String(l.replica)] ?? -1)) continue;
        let c = byReplica.get(l.replica);
        if (!c) byReplica.set(l.replica, (c = []));
        c.push([l.at, l.seq, l.stream, clean(l.text)]);
      }
      for (const [replica, c] of byReplica) {
        c.sort((a, b) => a[1] - b[1]);
        // a seq read twice within the round is stored once
        const unique = c.filter((l, i) => i === 0 || l[1] !== c[i - 1]![1]);
        chunks.push({ job, replica, lines: unique });
      }
    }
    const [stored, noted] = await Promise.all([this.insertChunks(chunks), this.upsertNotes(notes)]);
    return stored + noted;
  }

  /**
   * One statement for the round's chunks. A chunk whose first seq is already stored (another
   * worker's round of the same lines) is skipped: the next round reads on from the newest stored
   * line, so nothing is lost.
   */
  private async insertChunks(chunks: readonly { job: CollectableJob; replica: number; lines: ChunkLine[] }[]): Promise<number> {
    if (!chunks.length) return 0;
    const rows = await this.prisma.sql.query<{ n: number }>(
      `WITH ins AS (
         INSERT INTO "JobLogChunk" ("id", "jobId", "tenantId", "teamId", replica, "firstSeq", "lastSeq", "firstAt", "lastAt", lines, body)
         SELECT id, j, tn, tm, r, fs::bigint, ls::bigint, fa::timestamp(3), la::timestamp(3), n, b::jsonb
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[])
             AS u(id, j, tn, tm, r, fs, ls, fa, la, n, b)
         ON CONFLICT ("jobId", replica, "firstSeq") DO NOTHING
         RETURNING lines)
       SELECT COALESCE(sum(lines), 0)::int AS n FROM ins`,
      [
        chunks.map(() => newId()),
        chunks.map((c) => c.job.id),
        chunks.map((c) => c.job.tenantId),
        chunks.map((c) => c.job.teamId),
        chunks.map((c) => c.replica),
        chunks.map((c) => String(c.lines[0]![1])),
        chunks.map((c) => String(c.lines[c.lines.length - 1]![1])),
        chunks.map((c) => new Date(Math.min(...c.lines.map((l) => l[0]))).toISOString()),
        chunks.map((c) => new Date(Math.max(...c.lines.map((l) => l[0]))).toISOString()),
        chunks.map((c) => c.lines.length),
        chunks.map((c) => JSON.stringify(c.lines)),
      ],
    );
    return rows[0]?.n ?? 0;
  }

  /** Gantry's notes: one per replica, rewritten while it lasts. */
  private async upsertNotes(notes: readonly { job: CollectableJob; line: StoredLine }[]): Promise<number> {
    if (!notes.length) return 0;
    const rows = await this.prisma.sql.query<{ n: number }>(
      `WITH ins AS (
         INSERT INTO "JobLogLine" ("jobId", "tenantId", "teamId", replica, seq, at, stream, text)
         SELECT j, tn, tm, r, s::bigint, a::timestamp(3), st, t
           FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[]) AS u(j, tn, tm, r, s, a, st, t)
         ON CONFLICT ("jobId", replica, seq) DO UPDATE SET text = EXCLUDED.text, at = EXCLUDED.at
           WHERE "JobLogLine".stream = 'gantry'
         RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        notes.map((x) => x.job.id),
        notes.map((x) => x.job.tenantId),
        notes.map((x) => x.job.teamId),
        notes.map((x) => x.line.replica),
        notes.map((x) => String(x.line.seq)),
        notes.map((x) => new Date(x.line.at).toISOString()),
        notes.map((x) => x.line.stream),
        notes.map((x) => clean(x.line.text)),
      ],
    );
    return rows[0]?.n ?? 0;
  }

  /** The newest `tail` lines of the job at or after `since`, oldest first; `truncated` when more matched. */
  async read(scope: TenantScope, jobId: string, q: { tail: number; since?: Date }): Promise<{ lines: ReadLine[]; truncated: boolean }> {
    const need = q.tail + 1;
    const [chunked, rows] = await Promise.all([
      this.readChunks(scope, jobId, need, q.since),
      this.prisma.client.jobLogLine.findMany({
        where: { AND: [scopeWhere(scope, 'team-rows'), { jobId }, q.since ? { at: { gte: q.since } } : {}] },
        orderBy: [{ at: 'desc' }, { replica: 'desc' }, { seq: 'desc' }],
        take: need,
        select: { at: true, replica: true, seq: true, stream: true, text: true },
      }),
    ]);
    const newest = [...chunked, ...rows]
      .sort((a, b) => b.at.getTime() - a.at.getTime() || b.replica - a.replica || (b.seq > a.seq ? 1 : b.seq < a.seq ? -1 : 0))
      .slice(0, need);
    return { lines: newest.slice(0, q.tail).reverse(), truncated: newest.length > q.tail };
  }

  /**
   * The chunks' lines that may be among the job's newest `need` at or after `since`: the newest
   * chunks (by their last line) that hold `need` lines together start at some time T, so at least
   * `need` lines are at or after T and every line among the newest is too; the chunks that end at
   * or after T hold them all. One scan of the job's chunks; only those bodies are returned.
   */
  private async readChunks(scope: TenantScope, jobId: string, need: number, since?: Date): Promise<ReadLine[]> {
    const { tenantId, teamId } = scopeValues(scope);
    const rows = await this.prisma.sql.query<{ replica: number; body: ChunkLine[] }>(
      `WITH c AS (
         SELECT replica, body, "firstAt", "lastAt", lines,
                sum(lines) OVER (ORDER BY "lastAt" DESC, "firstSeq" DESC, replica DESC) AS upto
           FROM "JobLogChunk"
          WHERE "jobId" = $1 AND ($2::text IS NULL OR "tenantId" = $2) AND ($3::text IS NULL OR "teamId" = $3)
            AND ($4::timestamp(3) IS NULL OR "lastAt" >= $4::timestamp(3))
       )
       SELECT c.replica, c.body FROM c
        WHERE c."lastAt" >= (SELECT min("firstAt") FROM c WHERE upto - lines < $5)`,
      [jobId, tenantId, teamId, since ? since.toISOString() : null, need],
    );
    const sinceMs = since?.getTime() ?? -Infinity;
    return rows.flatMap((r) =>
      r.body.filter((l) => l[0] >= sinceMs).map(([at, seq, stream, text]) => ({ at: new Date(at), replica: r.replica, seq: BigInt(seq), stream, text })),
    );
  }
}
