import { Injectable } from '@nestjs/common';
import { Prisma, type Tx } from '@gantry/db';
import type { JobCreateParsed, PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { EventsRepository } from '../events/events.repository';
import { orderJobs, type ClusterSnapshot } from '@gantry/scheduler';
import { withHistory } from '../fair-share/fair-usage';
import { pendingJob } from '../cluster/snapshot';

export const jobWithPlacement = {
  allocations: {
    where: { endedAt: null },
    orderBy: [{ replica: 'asc' }, { gpuId: 'asc' }],
    include: { node: { select: { name: true } }, gpu: { select: { index: true } } },
  },
} satisfies Prisma.JobInclude;

export type JobRow = Prisma.JobGetPayload<{ include: typeof jobWithPlacement }>;

const ACTIVE_STATES = ['pending', 'starting', 'running', 'suspending', 'suspended'] as const;

/** Jobs, always read and changed through the caller's tenant scope. */
@Injectable()
export class JobsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  /**
   * Creates a pending job and its "submitted" event in one statement (a nested write, atomic
   * without an interactive transaction: a third of the round trips of the hot submission path).
   * A new job holds no GPUs: its placement is empty.
   */
  async create(
    scope: TenantScope & { kind: 'tenant' },
    job: JobCreateParsed,
    meta: { idempotencyKey?: string; idempotencyBodyHash?: string; keyId: string },
  ): Promise<JobRow> {
    assertCovers(scope, { tenantId: scope.tenantId, teamId: job.teamId }, `team ${job.teamId}`);
    const row = await this.prisma.client.job.create({
      data: {
        tenantId: scope.tenantId,
        teamId: job.teamId,
        name: job.name,
        kind: job.kind,
        priority: job.priority,
        replicas: job.replicas,
        resources: job.resources as Prisma.InputJsonValue,
        topologyLevel: job.topology.level,
        topologyRequired: job.topology.required,
        preemptible: job.preemptible,
        durationSeconds: job.simulation?.durationSeconds ?? null,
        idempotencyKey: meta.idempotencyKey ?? null,
        idempotencyBodyHash: meta.idempotencyBodyHash ?? null,
        createdByKeyId: meta.keyId,
        reasons: [{ code: 'queued', message: 'waiting for the next scheduling cycle' }],
        events: { create: { tenantId: scope.tenantId, type: 'job.submitted', message: `submitted ${job.replicas} replica(s)`, data: {} } },
      },
    });
    return { ...row, allocations: [] };
  }

  findByIdempotencyKey(scope: TenantScope & { kind: 'tenant' }, key: string) {
    return this.prisma.client.job.findFirst({
      where: { idempotencyKey: key, ...scopeWhere(scope, 'team-rows') },
      include: jobWithPlacement,
    });
  }

  list(scope: TenantScope, q: PageQuery, filter: { teamId?: string; state?: string }) {
    const a = pageArgs(q, 'desc');
    return this.prisma.client.job.findMany({
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

  find(scope: TenantScope, id: string) {
    return this.prisma.client.job.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') }, include: jobWithPlacement });
  }

  listEvents(scope: TenantScope, jobId: string) {
    return this.prisma.client.event.findMany({
      where: { jobId, job: scopeWhere(scope, 'team-rows') },
      orderBy: { createdAt: 'asc' },
      take: 200,
    });
  }

  /** Ids of pending jobs in queue order (priority, then fair share of the team, then age). */
  async pendingOrder(scope: TenantScope, history: { gpus: Record<string, number>; weight: number } = { gpus: {}, weight: 0 }): Promise<string[]> {
    return (await this.pendingQueue(scope, history)).map((j) => j.id);
  }

  /** Pending jobs of the caller's tenant in queue order, with their names, teams and priorities. */
  async pendingQueue(scope: TenantScope, history: { gpus: Record<string, number>; weight: number } = { gpus: {}, weight: 0 }) {
    const rows = await this.prisma.client.job.findMany({
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
    if (rows.length < 2) return rows;
    // The engine's own order (priority, then weighted dominant share of each team, then age),
    // from the teams' current usage, weights and the cluster's totals.
    const byId = new Map(rows.map((r) => [r.id, r]));
    const teamIds = [...new Set(rows.map((r) => r.teamId))];
    const [usage, teams, totals, gpus] = await Promise.all([
      this.prisma.client.allocation.groupBy({
        by: ['teamId'],
        where: { endedAt: null, teamId: { in: teamIds } },
        _sum: { gpuUnits: true, cpuMilli: true, memoryMiB: true },
      }),
      this.prisma.client.team.findMany({ where: { id: { in: teamIds } }, select: { id: true, weight: true } }),
      this.prisma.client.node.aggregate({ _sum: { cpuMilli: true, memoryMiB: true } }),
      this.prisma.client.gpu.count(),
    ]);
    const capacity = {
      nodes: [{ gpus: new Array(gpus), cpuMilli: totals._sum.cpuMilli ?? 0, memoryMiB: totals._sum.memoryMiB ?? 0 }],
    } as unknown as ClusterSnapshot;
    return orderJobs(capacity, rows.map(pendingJob), {
      teamUsage: withHistory(
        Object.fromEntries(
          usage.map((u) => [u.teamId, { gpus: Number(u._sum.gpuUnits ?? 0), cpuMilli: u._sum.cpuMilli ?? 0, memoryMiB: u._sum.memoryMiB ?? 0 }]),
        ),
        history.gpus,
        history.weight,
      ),
      teamWeights: Object.fromEntries(teams.map((t) => [t.id, Number(t.weight)])),
    }).map((j) => byId.get(j.id)!);
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
