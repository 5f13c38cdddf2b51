import { Injectable } from '@nestjs/common';
import { Prisma } from '@gantry/db';
import type { Priority, Reason } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
import { crashPoint } from '../../common/crash-points';
import { insertStatement } from '../../common/bulk-insert';
import { ALLOCATION_COLUMNS, Abort, allocationRow, newAllocationRows, takeGpuSlots, type NewAllocation } from '../allocations/gpu-slots';
import { quotaLocksQuery, withinQuota, type QuotaGuard } from '../quotas/quota-guard';
import { EVENT_COLUMNS, EventsRepository, newEventRows } from '../events/events.repository';
import { checkPlacements, type LockedState, type Placement } from './placement-batch';

/** A pending job as the cycle reads it. */
export type PendingJobRow = Prisma.JobGetPayload<{
  select: {
    id: true;
    name: true;
    tenantId: true;
    teamId: true;
    kind: true;
    priority: true;
    createdAt: true;
    replicas: true;
    resources: true;
    topologyLevel: true;
    topologyRequired: true;
    preemptible: true;
    durationSeconds: true;
    progressSeconds: true;
    reasons: true;
    version: true;
  };
}>;

/** Active allocations of one team on one GPU model, summed. */
/** A running or suspending job as preemption sees it, with the GPU units it holds. */
export interface RunningJobRow {
  id: string;
  tenantId: string;
  teamId: string;
  state: 'running' | 'suspending';
  priority: Priority;
  preemptible: boolean;
  requeueOnSuspend: boolean;
  startedAt: Date | null;
  createdAt: Date;
  units: number;
}

export interface HeldRow {
  teamId: string;
  gpuModel: string;
  units: number;
  cpuMilli: number;
  memoryMiB: number;
}

/** A team of a cycle's cohorts, with its quota rows. */
export interface QuotaContextRow {
  id: string;
  tenantId: string;
  weight: number;
  gpuTotal: number | null;
  quotas: { gpuModel: string; guaranteed: number; limit: number; gpuHourBudget: number | null; budgetPolicy: string }[];
}

/** Allocation rows per batched-commit transaction (15 bind parameters each). */
const BATCH_ALLOCATIONS = 1000;

/**
 * The scheduling cycle's reads and writes. The cycle acts for the whole cluster, so these
 * methods are system-scoped: only the worker calls them, never a route.
 */
@Injectable()
export class SchedulingRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  /**
   * The queue (oldest first, at most `limit`): one typed-SQL statement, as every cycle reads it
   * whole (5,000 pending jobs with their resources and reasons through Prisma's result mapping
   * cost the cycle more than the query).
   */
  pendingJobs(limit = 5000): Promise<PendingJobRow[]> {
    return this.prisma.sql.query<PendingJobRow>(
      `SELECT id, name, "tenantId", "teamId", kind::text AS kind, priority::text AS priority, "createdAt", replicas, resources,
         "topologyLevel", "topologyRequired", preemptible, "durationSeconds", "progressSeconds", reasons, version
       FROM "Job" WHERE state = 'pending' ORDER BY "createdAt", id LIMIT $1`,
      [limit],
    );
  }

  /**
   * What every team holds now, per GPU model (GPU units, CPU, memory of its active allocations):
   * the quota usage and, summed per team, the fair-share input, in one statement.
   */
  heldByTeamAndModel(): Promise<HeldRow[]> {
    return this.prisma.sql.query<HeldRow>(
      `SELECT "teamId", "gpuModel", sum("gpuUnits")::float8 AS units, sum("cpuMilli")::float8 AS "cpuMilli", sum("memoryMiB")::float8 AS "memoryMiB"
       FROM "Allocation" WHERE "endedAt" IS NULL GROUP BY "teamId", "gpuModel"`,
    );
  }

  /**
   * Every team of the tenants these teams belong to (the cohorts), with its weight, its tenant's
   * GPU total and its quota rows, in one statement (every cycle with pending work reads it).
   */
  quotaContext(teamIds: string[]): Promise<QuotaContextRow[]> {
    if (!teamIds.length) return Promise.resolve([]);
    return this.prisma.sql.query<QuotaContextRow>(
      `SELECT t.id, t."tenantId", t.weight::float8 AS weight, tn."gpuTotal"::float8 AS "gpuTotal",
         COALESCE(json_agg(json_build_object('gpuModel', q."gpuModel", 'guaranteed', q.guaranteed::float8, 'limit', q."limit"::float8,
           'gpuHourBudget', q."gpuHourBudget"::float8, 'budgetPolicy', q."budgetPolicy") ORDER BY q.id) FILTER (WHERE q.id IS NOT NULL), '[]') AS quotas
       FROM "Team" t JOIN "Tenant" tn ON tn.id = t."tenantId" LEFT JOIN "Quota" q ON q."teamId" = t.id
       WHERE t."tenantId" IN (SELECT "tenantId" FROM "Team" WHERE id = ANY($1::text[]))
       GROUP BY t.id, tn."gpuTotal"`,
      [teamIds],
    );
  }

  /** GPU-hours per team inside [start, end) (budgets). */
  async gpuHoursByTeam(teamIds: string[], start: Date, end: Date, now: Date): Promise<Map<string, number>> {
    if (!teamIds.length) return new Map();
    const rows = await this.prisma.client.$queryRaw<{ teamId: string; h: number | null }[]>`
      SELECT "teamId", SUM("gpuUnits"::float8 * EXTRACT(EPOCH FROM (LEAST(COALESCE("endedAt", ${now}::timestamp), ${end}::timestamp) - GREATEST("startedAt", ${start}::timestamp)))) / 3600 AS h
      FROM "Allocation"
      WHERE "teamId" IN (${Prisma.join(teamIds)}) AND "startedAt" < ${end}::timestamp AND ("endedAt" IS NULL OR "endedAt" > ${start}::timestamp)
      GROUP BY "teamId"`;
    return new Map(rows.map((r) => [r.teamId, Math.max(0, Number(r.h ?? 0))]));
  }

  /**
   * Running jobs with the GPU units they hold (preemption candidates), jobs being preempted, and
   * the ids of every job that holds GPUs now (`holding`: running, suspending or starting).
   */
  async runningJobs(): Promise<{ jobs: RunningJobRow[]; holding: Set<string> }> {
    // One typed-SQL statement (every cycle that leaves work waiting reads it): the running and
    // suspending jobs joined with what every job holds, both sides kept (a starting job holds GPUs
    // and is no candidate).
    const rows = await this.prisma.sql.query<Partial<RunningJobRow> & { holder: string | null; units: number | null }>(
      `SELECT j.id, j."tenantId", j."teamId", j.state::text AS state, j.priority::text AS priority, j.preemptible,
              j."requeueOnSuspend", j."startedAt", j."createdAt", a."jobId" AS holder, a.units
         FROM (SELECT id, "tenantId", "teamId", state, priority, preemptible, "requeueOnSuspend", "startedAt", "createdAt"
                 FROM "Job" WHERE state IN ('running', 'suspending') LIMIT 20000) j
         FULL OUTER JOIN (SELECT "jobId", sum("gpuUnits")::float8 AS units FROM "Allocation"
                           WHERE "endedAt" IS NULL AND "jobId" IS NOT NULL GROUP BY "jobId") a ON a."jobId" = j.id`,
    );
    const jobs: RunningJobRow[] = [];
    const holding = new Set<string>();
    for (const r of rows) {
      if (r.holder) holding.add(r.holder);
      if (r.id) jobs.push({ ...(r as RunningJobRow), units: r.units ?? 0 });
    }
    return { jobs, holding };
  }

  /**
   * Preemption: running -> suspending with `requeueOnSuspend`, so that the lifecycle's suspend
   * (checkpoint through the driver, GPUs released) ends in `pending` instead of `suspended`.
   * The state condition makes it safe against the job finishing or being cancelled meanwhile.
   */
  async preempt(victim: { id: string; tenantId: string }, message: string): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.job.updateMany({
        where: { id: victim.id, state: 'running', preemptible: true },
        data: {
          state: 'suspending',
          requeueOnSuspend: true,
          version: { increment: 1 },
          reasons: [{ code: 'preempted', message }] as unknown as Prisma.InputJsonValue,
        },
      });
      if (r.count !== 1) return false;
      await this.events.append(tx, { tenantId: victim.tenantId, jobId: victim.id, type: 'job.preempted', message });
      return true;
    });
  }

  /**
   * Step 6, commit: the job moves pending -> starting and takes its GPU slots, all or nothing.
   * A slot someone else took meanwhile (unique active slot), a share that would pass 1000
   * thousandths, or a job changed meanwhile (version) aborts the whole decision.
   */
  async commitPlacement(
    job: { id: string; tenantId: string; teamId: string; version: number },
    allocs: NewAllocation[],
    summary: string,
    guard?: QuotaGuard,
  ): Promise<boolean> {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        if (guard && !(await withinQuota(tx, job, allocs, guard))) return false;
        const moved = await tx.job.updateMany({
          where: { id: job.id, state: 'pending', version: job.version },
          data: { state: 'starting', version: { increment: 1 }, reasons: [] },
        });
        if (moved.count !== 1) return false;
        await takeGpuSlots(tx, { tenantId: job.tenantId, teamId: job.teamId, jobId: job.id }, allocs);
        await this.events.append(tx, { tenantId: job.tenantId, jobId: job.id, type: 'job.placed', message: summary });
        crashPoint('placement.commit');
        return true;
      });
    } catch (e) {
      if (e instanceof Abort || isUniqueViolation(e)) return false;
      throw e;
    }
  }

  /**
   * Step 6 for a whole cycle: every placement in ONE transaction (a cycle of more than
   * BATCH_ALLOCATIONS allocation rows: one per slice of that size). Locks in a fixed order (the
   * quota advisory locks of every team, then of every tenant with a total, sorted; the job
   * rows in id order; every GPU in id order), then the re-checks of `withinQuota` and
   * `takeGpuSlots` in the engine's order (checkPlacements): a placement that fails is dropped
   * alone and the others commit. Returns, per placement, whether it committed. Anything the
   * checks did not foresee (a unique violation, a deadlock) rolls the batch back and commits the
   * placements one by one instead (`commitPlacement`), so the batch is never less safe.
   */
  async commitPlacements(placements: Placement[]): Promise<boolean[]> {
    // A very large cycle commits in slices of about BATCH_ALLOCATIONS allocation rows, within
    // Postgres's bind-parameter limit; earlier slices count for the later ones as committed rows.
    const out: boolean[] = [];
    let from = 0;
    while (from < placements.length) {
      let to = from;
      let rows = 0;
      while (to < placements.length && (to === from || rows + placements[to]!.allocs.length <= BATCH_ALLOCATIONS)) rows += placements[to++]!.allocs.length;
      out.push(...(await this.commitSlice(placements.slice(from, to))));
      from = to;
    }
    return out;
  }

  private async commitSlice(placements: Placement[]): Promise<boolean[]> {
    if (!placements.length) return [];
    try {
      // typed SQL on one pooled connection: through Prisma every statement of the commit was
      // compiled and its arrays bound by its query compiler (the placement commit was most of a
      // 10,000-node cycle's slow tail)
      return await this.prisma.sql.transaction(async (tx) => {
        const guarded = placements.filter((p) => p.guard);
        const keys = [
          ...new Set([
            ...guarded.map((p) => 'quota-team:' + p.job.teamId),
            ...guarded.filter((p) => p.guard!.tenantTotal !== null).map((p) => 'quota-tenant:' + p.job.tenantId),
          ]),
        ].sort(teamsFirst);
        const jobIds = [...new Set(placements.map((p) => p.job.id))].sort();
        // the quota locks, then the job rows, in one round trip: no job row is returned (and
        // locked) before the locks' one row exists, that is before every quota lock is held; with
        // no job still pending nothing is locked, and nothing is written either
        const jobs = await tx.query<{ id: string; version: number }>(
          `WITH quota_locks AS MATERIALIZED (${quotaLocksQuery(2)})
           SELECT j.id, j.version FROM quota_locks, "Job" j
           WHERE j.id = ANY($1::text[]) AND j.state = 'pending' AND quota_locks.held >= 0 ORDER BY j.id FOR UPDATE OF j`,
          [jobIds, keys],
        );
        const gpuIds = [...new Set(placements.flatMap((p) => p.allocs.map((a) => a.gpuId)))].sort();
        const teamIds = [...new Set(guarded.map((p) => p.job.teamId))];
        const tenantIds = [...new Set(guarded.filter((p) => p.guard!.tenantTotal !== null).map((p) => p.job.tenantId))];
        const gpus = gpuIds.length
          ? await tx.query<{ id: string; mode: string; schedulable: boolean; nodeId: string }>(
              `SELECT g.id, g.mode::text AS mode, g.schedulable, g."nodeId" FROM "Gpu" g
               WHERE g.id = ANY($1::text[]) ORDER BY g.id FOR UPDATE OF g`,
              [gpuIds],
            )
          : [];
        const nodeIds = [...new Set(gpus.map((g) => g.nodeId))].sort();
        const migGpus = [...new Set(placements.flatMap((p) => p.allocs.filter((a) => a.migProfile).map((a) => a.gpuId)))];
        // In one round trip (a slow cycle's commit waits for the worker's event loop between round
        // trips, as much as for Postgres): the GPUs' nodes, shared and in id order as takeGpuSlots
        // does (a power-down locks its node for update and counts its allocations, so it either
        // waits for this commit or is seen here), and what the re-checks read besides the locked
        // rows: the GPUs' active allocations, the MIG GPUs' slices, what the teams and tenants hold.
        // The statement's snapshot may predate a wait for a node: what it reads is held still by
        // the locks taken before it (the GPUs' rows, the quota locks).
        const held = await tx.query<{ kind: 'node' | 'active' | 'slice' | 'team' | 'tenant'; a: string; b: string | null; n: number }>(
          `WITH nodes AS (
             SELECT id, state = 'ready' AND "powerState" = 'on' AS ready FROM "Node" WHERE id = ANY($5::text[]) ORDER BY id FOR SHARE
           )
           SELECT 'node' AS kind, id AS a, NULL AS b, (CASE WHEN ready THEN 1 ELSE 0 END)::float8 AS n FROM nodes
           UNION ALL
           SELECT 'active', "gpuId", "activeSlot", milli::float8 FROM "Allocation"
             WHERE "gpuId" = ANY($1::text[]) AND "endedAt" IS NULL
           UNION ALL
           SELECT 'slice', "gpuId", profile || '@' || start, 0 FROM "GpuInstance" WHERE "gpuId" = ANY($2::text[])
           UNION ALL
           SELECT 'team', "teamId", "gpuModel", SUM("gpuUnits")::float8 FROM "Allocation"
             WHERE "teamId" = ANY($3::text[]) AND "endedAt" IS NULL GROUP BY "teamId", "gpuModel"
           UNION ALL
           SELECT 'tenant', "tenantId", NULL, SUM("gpuUnits")::float8 FROM "Allocation"
             WHERE "tenantId" = ANY($4::text[]) AND "endedAt" IS NULL GROUP BY "tenantId"`,
          [gpuIds, migGpus, teamIds, tenantIds, nodeIds],
        );
        const of = (kind: (typeof held)[number]['kind']) => held.filter((h) => h.kind === kind);
        const active = of('active');
        const teamHeld = of('team');
        const nodeTakesWork = new Map(of('node').map((n) => [n.a, Number(n.n) === 1]));
        const state: LockedState = {
          pendingVersions: new Map(jobs.map((j) => [j.id, Number(j.version)])),
          gpus: new Map(gpus.map((g) => [g.id, { mode: g.mode, schedulable: g.schedulable, nodeReady: nodeTakesWork.get(g.nodeId) === true }])),
          slices: new Set(of('slice').map((s) => `${s.a}:${s.b}`)),
          slots: new Set(active.flatMap((a) => (a.b ? [a.b] : []))),
          busy: countBy(active.map((a) => a.a)),
          sharedMilli: sumBy(active.filter((a) => !a.b).map((a) => [a.a, Number(a.n)])),
          teamHeld: new Map(),
          tenantHeld: new Map(of('tenant').map((t) => [t.a, Number(t.n)])),
        };
        for (const h of teamHeld) state.teamHeld.set(h.a, (state.teamHeld.get(h.a) ?? new Map()).set(h.b!, Number(h.n)));
        const { accepted, makeShared } = checkPlacements(placements, state);
        const ok = placements.map(() => false);
        if (!accepted.length) return ok;
        const taken = accepted.map((i) => placements[i]!);
        // the writes in one statement (one round trip, not four: each waited for the worker's
        // event loop); its parts see the same snapshot and none reads what another writes
        const allocations = insertStatement(
          'Allocation',
          ALLOCATION_COLUMNS,
          newAllocationRows(taken.flatMap((p) => p.allocs.map((a) => allocationRow({ tenantId: p.job.tenantId, teamId: p.job.teamId, jobId: p.job.id }, a)))),
          3,
        );
        const events = insertStatement(
          'Event',
          EVENT_COLUMNS,
          newEventRows(taken.map((p) => ({ tenantId: p.job.tenantId, jobId: p.job.id, type: 'job.placed', message: p.summary }))),
          3 + allocations.values.length,
        );
        await tx.execute(
          `WITH placed AS (
             UPDATE "Job" SET state = 'starting', version = version + 1, reasons = '[]'::jsonb WHERE id = ANY($1::text[]) RETURNING id
           ), shared AS (
             UPDATE "Gpu" SET mode = 'shared', version = version + 1 WHERE id = ANY($2::text[]) RETURNING id
           ), allocations AS (
             ${allocations.text} RETURNING id
           ), events AS (
             ${events.text} RETURNING id
           )
           SELECT (SELECT count(*) FROM placed), (SELECT count(*) FROM shared), (SELECT count(*) FROM allocations), (SELECT count(*) FROM events)`,
          [taken.map((p) => p.job.id), makeShared, ...allocations.values, ...events.values],
        );
        crashPoint('placement.commit');
        for (const i of accepted) ok[i] = true;
        return ok;
      });
    } catch (e) {
      if (!(e instanceof Abort || isUniqueViolation(e) || isDeadlock(e))) throw e;
      const out: boolean[] = [];
      for (const p of placements) out.push(await this.commitPlacement(p.job, p.allocs, p.summary, p.guard));
      return out;
    }
  }

  /** Step 7, explain: stores the reasons of jobs left pending (only those that changed). */
  async setReasons(updates: { jobId: string; reasons: Reason[] }[]): Promise<void> {
    // One statement per 2,000 jobs, two array parameters (typed SQL: Prisma's raw queries pass
    // every value through its query compiler): a long queue whose reasons all change (quota
    // figures move with every placement) costs a round trip or two, not one per job.
    for (let i = 0; i < updates.length; i += 2000) {
      const chunk = updates.slice(i, i + 2000);
      await this.prisma.sql.query(
        `UPDATE "Job" AS j SET reasons = v.r::jsonb
         FROM unnest($1::text[], $2::text[]) AS v(id, r)
         WHERE j.id = v.id AND j.state = 'pending'`,
        [chunk.map((u) => u.jobId), chunk.map((u) => JSON.stringify(u.reasons))],
      );
    }
  }
}

/** The quota lock order of `withinQuota`: every team before any tenant, each sorted. */
function teamsFirst(a: string, b: string): number {
  const ta = a.startsWith('quota-team:') ? 0 : 1;
  const tb = b.startsWith('quota-team:') ? 0 : 1;
  return ta - tb || (a < b ? -1 : a > b ? 1 : 0);
}

function countBy(keys: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

function sumBy(rows: [string, number][]): Map<string, number> {
  const m = new Map<string, number>();
  for (const [k, n] of rows) m.set(k, (m.get(k) ?? 0) + n);
  return m;
}

/** Postgres detected a deadlock (40P01) and chose this transaction. */
function isDeadlock(e: unknown): boolean {
  const text = e instanceof Error ? e.message : String(e);
  return /40P01|deadlock detected/i.test(text);
}
