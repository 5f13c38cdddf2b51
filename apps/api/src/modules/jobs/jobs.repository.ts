import { Injectable } from '@nestjs/common';
import { Prisma, type Tx } from '@gantry/db';
import type { JobCreateParsed, PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assertCovers, scopeValues, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { EventsRepository } from '../events/events.repository';
import { orderJobs, type ClusterSnapshot } from '@gantry/scheduler';
import { withHistory } from '../fair-share/fair-usage';
import { pendingJob } from '../cluster/snapshot';
import { newId } from '../../common/ids';

export const jobWithPlacement = {
  allocations: {
    where: { endedAt: null },
    orderBy: [{ replica: 'asc' }, { gpuId: 'asc' }],
    include: { node: { select: { name: true } }, gpu: { select: { index: true } } },
  },
} satisfies Prisma.JobInclude;

export type JobRow = Prisma.JobGetPayload<{ include: typeof jobWithPlacement }>;

/** Allocations released within this long of a job's last release belong to its last run. */
const LAST_RUN_WINDOW_MS = 5000;

/** Each team's decayed average GPUs and the weight fair share gives it (see FairShareService). */
export type QueueHistory = { gpus: Record<string, number>; weight: number };

/** What ordering the queue reads of a pending job. */
type QueuedRow = Parameters<typeof pendingJob>[0] & { id: string; teamId: string };

const ACTIVE_STATES = ['pending', 'starting', 'running', 'suspending', 'suspended'] as const;

/** Jobs, always read and changed through the caller's tenant scope. */
/** A team's standing in the queue order: weight, what it holds now, and the cluster's totals. */
interface TeamStanding {
  id: string;
  weight: number;
  gpus: number;
  cpuMilli: number;
  memoryMiB: number;
  clusterGpus: number;
  clusterCpuMilli: number;
  clusterMemoryMiB: number;
}

@Injectable()
export class JobsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  /**
   * Creates a pending job and its "submitted" event in one SQL statement (one round trip, no
   * transaction to open, no query plan to build: the hot path of submission). The idempotency
   * key is unique per tenant: a concurrent retry fails with a unique violation (the caller then
   * answers the first job). A new job holds no GPUs: its placement is empty.
   */
  async create(
    scope: TenantScope & { kind: 'tenant' },
    job: JobCreateParsed,
    meta: { idempotencyKey?: string; idempotencyBodyHash?: string; keyId: string },
  ): Promise<JobRow> {
    assertCovers(scope, { tenantId: scope.tenantId, teamId: job.teamId }, `team ${job.teamId}`);
    const [row] = await this.prisma.sql.query<Omit<JobRow, 'allocations'>>(
      `WITH j AS (
         INSERT INTO "Job" ("id", "tenantId", "teamId", "name", "kind", "priority", "replicas", "resources", "topologyLevel",
           "topologyRequired", "preemptible", "durationSeconds", "idempotencyKey", "idempotencyBodyHash", "createdByKeyId", "reasons")
         VALUES ($1, $2, $3, $4, $5::"JobKind", $6::"Priority", $7, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16::jsonb)
         RETURNING *
       ), e AS (
         INSERT INTO "Event" ("id", "tenantId", "jobId", "type", "message", "data", "createdAt")
         SELECT $17, j."tenantId", j."id", 'job.submitted', $18, '{}'::jsonb, j."createdAt" FROM j
       )
       SELECT * FROM j`,
      [
        newId(),
        scope.tenantId,
        job.teamId,
        job.name,
        job.kind,
        job.priority,
        job.replicas,
        JSON.stringify(job.resources),
        job.topology.level,
        job.topology.required,
        job.preemptible,
        job.simulation?.durationSeconds ?? null,
        meta.idempotencyKey ?? null,
        meta.idempotencyBodyHash ?? null,
        meta.keyId,
        JSON.stringify([{ code: 'queued', message: 'waiting for the next scheduling cycle' }]),
        newId(),
        `submitted ${job.replicas} replica(s)`,
      ],
    );
    return { ...row!, allocations: [] };
  }

  findByIdempotencyKey(scope: TenantScope & { kind: 'tenant' }, key: string) {
    return this.prisma.client.job.findFirst({
      where: { idempotencyKey: key, ...scopeWhere(scope, 'team-rows') },
      include: jobWithPlacement,
    });
  }

  list(scope: TenantScope, q: PageQuery, filter: { teamId?: string; state?: string }) {
    const a = pageArgs(q, 'desc');
    return this.prisma.reads.client.job.findMany({
      ...a,
      where: {
        AND: [
          a.where,
          scopeWhere(scope, 'team-rows'),
          filter.teamId ? { teamId: filter.teamId } : {},
          filter.state ? { state: filter.state as Prisma.JobWhereInput['state'] } : {},
        ],
      },
      include: jobWithPlacement,
    });
  }

  /** Jobs in each state (the caller's scope, one team when `teamId`); states with none are absent. */
  async stateCounts(scope: TenantScope, teamId?: string): Promise<Map<string, number>> {
    const { tenantId, teamId: boundTeam } = scopeValues(scope);
    const rows = await this.prisma.reads.sql.query<{ state: string; n: number }>(
      `SELECT "state"::text AS "state", count(*)::int AS "n" FROM "Job"
        WHERE ($1::text IS NULL OR "tenantId" = $1) AND ($2::text IS NULL OR "teamId" = $2) AND ($3::text IS NULL OR "teamId" = $3)
        GROUP BY "state"`,
      [tenantId, boundTeam, teamId ?? null],
    );
    return new Map(rows.map((r) => [r.state, r.n]));
  }

  /** Pending jobs of the caller's tenant (the cluster's for the platform) per team and priority. */
  pendingByTeamAndPriority(scope: TenantScope): Promise<{ teamId: string; priority: string; jobs: number }[]> {
    return this.prisma.sql.query(
      `SELECT "teamId", "priority"::text AS "priority", count(*)::int AS "jobs" FROM "Job"
        WHERE "state" = 'pending' AND ($1::text IS NULL OR "tenantId" = $1)
        GROUP BY "teamId", "priority"`,
      [scopeValues(scope).tenantId],
    );
  }

  /** Those of `ids` still pending (in the caller's scope), in no particular order. */
  stillPending(scope: TenantScope, ids: string[]) {
    return this.prisma.reads.client.job.findMany({
      where: { id: { in: ids }, state: 'pending', ...scopeWhere(scope, 'team-rows') },
      include: jobWithPlacement,
    });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.reads.client.job.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') }, include: jobWithPlacement });
  }

  /**
   * Where jobs last ran: per job, the allocations released at the end of its last run (those that
   * ended within a few seconds of its latest release, one per replica and GPU slot). Jobs that
   * never held a GPU are absent.
   */
  async lastRuns(scope: TenantScope, jobIds: string[]): Promise<Map<string, JobRow['allocations']>> {
    const out = new Map<string, JobRow['allocations']>();
    if (!jobIds.length) return out;
    const rows = await this.prisma.reads.client.allocation.findMany({
      where: { AND: [{ jobId: { in: jobIds } }, { endedAt: { not: null } }, { job: scopeWhere(scope, 'team-rows') }] },
      orderBy: [{ endedAt: 'desc' }, { replica: 'asc' }, { gpuId: 'asc' }],
      include: { node: { select: { name: true } }, gpu: { select: { index: true } } },
      take: 20_000,
    });
    const latest = new Map<string, number>();
    const seen = new Set<string>();
    for (const a of rows) {
      const end = a.endedAt!.getTime();
      const last = latest.get(a.jobId!) ?? end;
      latest.set(a.jobId!, last);
      const slot = `${a.jobId}:${a.replica}:${a.gpuId}:${a.migStart ?? ''}`;
      if (last - end > LAST_RUN_WINDOW_MS || seen.has(slot)) continue;
      seen.add(slot);
      out.set(a.jobId!, [...(out.get(a.jobId!) ?? []), a]);
    }
    for (const list of out.values()) list.sort((x, y) => x.replica - y.replica || x.gpuId.localeCompare(y.gpuId));
    return out;
  }

  listEvents(scope: TenantScope, jobId: string) {
    return this.prisma.reads.client.event.findMany({
      where: { jobId, job: scopeWhere(scope, 'team-rows') },
      orderBy: { createdAt: 'asc' },
      take: 200,
    });
  }

  /** Pending jobs of the caller's tenant in queue order, with their names, teams and priorities. */
  async pendingQueue(scope: TenantScope, history: QueueHistory = { gpus: {}, weight: 0 }) {
    const rows = await this.prisma.reads.client.job.findMany({
      where: { state: 'pending', ...scopeWhere(scope, 'tenant-rows') },
      select: {
        id: true,
        name: true,
        tenantId: true,
        teamId: true,
        kind: true,
        priority: true,
        createdAt: true,
        replicas: true,
        resources: true,
        topologyLevel: true,
        topologyRequired: true,
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: 10_000,
    });
    return this.inQueueOrder(rows, history);
  }

  /**
   * The first `size` pending jobs of the caller's tenant (the cluster's for the platform) in queue
   * order, exactly as `pendingQueue` would start, reading only each team's `size` oldest jobs of
   * each priority: the first `size` places can hold no other (a team's next job comes only after
   * its older ones, and every job of a higher priority is read). Pending jobs hold no GPUs: their
   * placement is empty. `history` may still be on its way: it is awaited beside the jobs' read (a
   * failure of either fails the call, none is left unawaited).
   */
  async queueHead(scope: TenantScope, size: number, history: QueueHistory | Promise<QueueHistory> = { gpus: {}, weight: 0 }): Promise<JobRow[]> {
    const { tenantId } = scopeValues(scope);
    // One round trip on the way: the teams' standing is read beside the jobs, for every team
    // with a pending job in the scope (a superset of the head's teams), not after them.
    const [rows, h, teams] = await Promise.all([
      this.prisma.reads.sql.query<Omit<JobRow, 'allocations'> & { rn?: unknown }>(
        `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY "priority", "teamId" ORDER BY "createdAt", "id") AS "rn"
                        FROM "Job" WHERE "state" = 'pending' AND ($1::text IS NULL OR "tenantId" = $1)) AS "q"
        WHERE "rn" <= $2
        ORDER BY "createdAt", "id"`,
        [tenantId, size],
      ),
      history,
      this.queueTeams({ pendingIn: tenantId }),
    ]);
    const jobs: JobRow[] = rows.map(({ rn: _rn, ...job }) => ({ ...job, allocations: [] }));
    return (await this.inQueueOrder(jobs, h, teams)).slice(0, size);
  }

  /**
   * `rows` (pending, oldest first) in the engine's order: priority, then weighted dominant share
   * of each team with its history, then age. `standing`: the teams' standing when already read
   * (it must cover every team of `rows`).
   */
  private async inQueueOrder<R extends QueuedRow>(rows: R[], history: QueueHistory, standing?: TeamStanding[]): Promise<R[]> {
    if (rows.length < 2) return rows;
    // The engine's own order, from the teams' current usage, weights and the cluster's totals (one statement).
    const byId = new Map(rows.map((r) => [r.id, r]));
    const teamIds = [...new Set(rows.map((r) => r.teamId))];
    // (read beside the rows, a team whose first pending job came between the two reads is missing: read again)
    const covered = standing && teamIds.every((id) => standing.some((t) => t.id === id));
    const teams = covered ? standing : await this.queueTeams({ teamIds });
    const cluster = teams[0] ?? { clusterGpus: 0, clusterCpuMilli: 0, clusterMemoryMiB: 0 };
    const capacity = {
      nodes: [{ gpus: new Array(cluster.clusterGpus), cpuMilli: cluster.clusterCpuMilli, memoryMiB: cluster.clusterMemoryMiB }],
    } as unknown as ClusterSnapshot;
    return orderJobs(capacity, rows.map(pendingJob), {
      teamUsage: withHistory(
        Object.fromEntries(teams.map((t) => [t.id, { gpus: t.gpus, cpuMilli: t.cpuMilli, memoryMiB: t.memoryMiB }])),
        history.gpus,
        history.weight,
      ),
      teamWeights: Object.fromEntries(teams.map((t) => [t.id, t.weight])),
    }).map((j) => byId.get(j.id)!);
  }

  /**
   * The teams' standing for the queue order (one statement): weight, what each holds now, and the
   * cluster's totals on every row; for the teams named, or for every team with a pending job in
   * a tenant (`pendingIn`; null: the cluster).
   */
  private queueTeams(which: { teamIds: string[] } | { pendingIn: string | null }): Promise<TeamStanding[]> {
    const [ids, arg] =
      'teamIds' in which
        ? ['SELECT unnest($1::text[]) AS "id"', which.teamIds]
        : [`SELECT DISTINCT "teamId" AS "id" FROM "Job" WHERE "state" = 'pending' AND ($1::text IS NULL OR "tenantId" = $1)`, which.pendingIn];
    return this.prisma.reads.sql.query<TeamStanding>(
      `WITH "ids" AS (${ids})
         SELECT t."id", t."weight"::float8 AS "weight",
                COALESCE(u."gpus", 0)::float8 AS "gpus", COALESCE(u."cpuMilli", 0)::float8 AS "cpuMilli", COALESCE(u."memoryMiB", 0)::float8 AS "memoryMiB",
                c."gpus"::float8 AS "clusterGpus", c."cpuMilli"::float8 AS "clusterCpuMilli", c."memoryMiB"::float8 AS "clusterMemoryMiB"
           FROM "Team" t
           LEFT JOIN (SELECT "teamId", sum("gpuUnits") AS "gpus", sum("cpuMilli") AS "cpuMilli", sum("memoryMiB") AS "memoryMiB"
                        FROM "Allocation" WHERE "endedAt" IS NULL AND "teamId" IN (SELECT "id" FROM "ids") GROUP BY "teamId") u ON u."teamId" = t."id"
           CROSS JOIN (SELECT (SELECT count(*) FROM "Gpu") AS "gpus", COALESCE(sum("cpuMilli"), 0) AS "cpuMilli", COALESCE(sum("memoryMiB"), 0) AS "memoryMiB" FROM "Node") c
          WHERE t."id" IN (SELECT "id" FROM "ids")`,
      [arg],
    );
  }

  /**
   * Suspend: a pending job is held at once (it holds nothing); a starting or running one goes
   * to `suspending` and the worker checkpoints it and frees its GPUs. Null when not found.
   */
  suspend(scope: TenantScope, id: string) {
    return this.transition(scope, id, (job) => {
      if (job.state === 'pending')
        return {
          state: 'suspended' as const,
          event: 'job.suspended',
          message: 'held before it started',
          reasons: [{ code: 'suspended', message: 'suspended by the user; resume to requeue it' }],
        };
      if (job.state === 'starting' || job.state === 'running')
        return { state: 'suspending' as const, event: 'job.suspending', message: 'checkpointing before releasing its GPUs', reasons: [] };
      return null;
    });
  }

  /** Resume: a suspended job goes back to the queue with its progress and checkpoint. */
  resume(scope: TenantScope, id: string) {
    return this.transition(scope, id, (job) =>
      job.state === 'suspended'
        ? {
            state: 'pending' as const,
            event: 'job.resumed',
            message: `requeued with ${Math.round(job.progressSeconds)} s of progress kept`,
            reasons: [{ code: 'queued', message: 'resumed; waiting for the next scheduling cycle' }],
          }
        : null,
    );
  }

  /** Ids of a team's jobs that a team suspend acts on: suspendable kinds, pending, starting or running. */
  async suspendableIdsOfTeam(scope: TenantScope, teamId: string): Promise<string[]> {
    const rows = await this.prisma.client.job.findMany({
      where: {
        AND: [scopeWhere(scope, 'team-rows'), { teamId }, { kind: { in: [...SUSPENDABLE_KINDS] } }, { state: { in: ['pending', 'starting', 'running'] } }],
      },
      orderBy: { createdAt: 'asc' },
      select: { id: true },
    });
    return rows.map((r) => r.id);
  }

  /** Ids of a team's suspended jobs, oldest first. */
  async suspendedIdsOfTeam(scope: TenantScope, teamId: string): Promise<string[]> {
    const rows = await this.prisma.client.job.findMany({
      where: { AND: [scopeWhere(scope, 'team-rows'), { teamId }, { state: 'suspended' }] },
      orderBy: { createdAt: 'asc' },
      select: { id: true },
    });
    return rows.map((r) => r.id);
  }

  /** A state change guarded by the job's version, with its event, in one transaction. */
  private transition(
    scope: TenantScope,
    id: string,
    decide: (job: {
      state: string;
      progressSeconds: number;
    }) => { state: 'suspended' | 'suspending' | 'pending'; event: string; message: string; reasons: object[] } | null,
  ) {
    return this.prisma.client.$transaction(async (tx) => {
      const job = await tx.job.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') } });
      if (!job) return { job: null, changed: false, to: null };
      const next = decide(job);
      if (!next) return { job, changed: false, to: null };
      const r = await tx.job.updateMany({
        where: { id, version: job.version, ...scopeWhere(scope, 'team-rows') },
        data: { state: next.state, version: { increment: 1 }, reasons: next.reasons as Prisma.InputJsonValue },
      });
      if (r.count !== 1) return { job: await tx.job.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') } }), changed: false, to: null };
      await this.events.append(tx, { tenantId: job.tenantId, jobId: id, type: next.event, message: next.message });
      return { job, changed: true, to: next.state };
    });
  }

  /**
   * Cancels an active job: releases its allocations and records the event, all or nothing.
   * The state condition (not a version) makes it safe against a concurrent placement commit:
   * whichever transaction comes second sees the other's result.
   */
  cancel(scope: TenantScope, id: string, now: Date) {
    return this.prisma.client.$transaction(async (tx) => {
      const job = await tx.job.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') } });
      if (!job) return { job, cancelled: false };
      const updated = await tx.job.updateMany({
        where: { id, state: { in: [...ACTIVE_STATES] }, ...scopeWhere(scope, 'team-rows') },
        data: {
          state: 'cancelled',
          finishedAt: now,
          runningSince: null,
          version: { increment: 1 },
          reasons: [{ code: 'cancelled', message: 'cancelled by the user' }],
        },
      });
      if (updated.count === 0) return { job: await tx.job.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') } }), cancelled: false };
      await releaseAllocations(tx, scope, id, now);
      await this.events.append(tx, { tenantId: job.tenantId, jobId: id, type: 'job.cancelled', message: 'cancelled by the user' });
      return { job, cancelled: true };
    });
  }
}

/** Job kinds whose work can be checkpointed and resumed. */
export const SUSPENDABLE_KINDS = ['training', 'notebook', 'vm', 'cluster'] as const;

/** Ends every active allocation of a job in the scope (its GPU slots become free at once). */
export async function releaseAllocations(tx: Tx, scope: TenantScope, jobId: string, now: Date): Promise<number> {
  const r = await tx.allocation.updateMany({ where: { jobId, endedAt: null, ...scopeWhere(scope, 'team-rows') }, data: { endedAt: now, activeSlot: null } });
  return r.count;
}
