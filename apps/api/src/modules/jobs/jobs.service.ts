import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { JOB_STATES, QUEUE_HEAD_SIZE, type Job, type JobCreateParsed, type JobDetail, type JobsSummary, type Page, type PageQuery } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError, notFound } from '../../common/errors';
import { isUniqueViolation } from '../../common/prisma-errors';
import { toPage } from '../../common/pagination';
import { ownerOf, scopeOf, type Principal } from '../../common/principal';
import { type TenantScope } from '../../common/tenant-scope';
import { QueuesService } from '../../queues/queues.service';
import { TenantsRepository } from '../tenants/tenants.repository';
import { ChangeEpoch, EpochCache } from '../../common/change-epoch.service';
import { covers } from '../../common/tenant-scope';
import { ClusterRepository } from '../cluster/cluster.repository';
import { JobsRepository, SUSPENDABLE_KINDS, type JobRow } from './jobs.repository';
import { presentJob, presentJobDetail } from './jobs.presenter';
import { replicaGpuUnits } from '../quotas/job-units';
import { JobRequestValidator } from './job-request.validator';
import { checkFitsQuota } from '../quotas/quota-coverage';
import { QuotasRepository } from '../quotas/quotas.repository';
import { QueuePositions } from './queue-positions.service';

/** sha256 of a request body as parsed (defaults filled), to tell a retry from a reuse of its key. */
const requestHash = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

/** A team with its quota rows and tenant, as submission checks it. */
type TeamWithQuotas = NonNullable<Awaited<ReturnType<QuotasRepository['findTeam']>>>;
/** How long a team's quotas may be reused at most (quota changes reach every process at once through ChangeEpoch). */
const TEAM_CACHE_MS = 10_000;
/** How long the cluster's GPU count may be reused (it changes only when the inventory grows). */
const GPU_COUNT_MS = 5_000;

@Injectable()
export class JobsService {
  private readonly teamCache: EpochCache<TeamWithQuotas>;
  private readonly gpuCounts = new Map<string, { at: number; n: Promise<number> }>();

  constructor(
    private readonly jobs: JobsRepository,
    private readonly teams: TenantsRepository,
    private readonly validator: JobRequestValidator,
    private readonly quotas: QuotasRepository,
    private readonly queues: QueuesService,
    private readonly cluster: ClusterRepository,
    epochs: ChangeEpoch,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly positions: QueuePositions,
  ) {
    this.teamCache = new EpochCache<TeamWithQuotas>(epochs, 'teams', TEAM_CACHE_MS);
  }

  /**
   * Submits a job. An `Idempotency-Key` is the caller's own (scoped to its owner and the team):
   * a retry with the same key and body answers the first job, the same key with another body
   * is refused (409), and another caller's identical key is a different key.
   */
  async submit(p: Principal, body: JobCreateParsed, idempotencyKey?: string): Promise<{ job: Job; replayed: boolean }> {
    const scope = scopeOf(p);
    if (scope.kind !== 'tenant') throw new DomainError('forbidden', 'jobs are submitted with a tenant or team key');
    const team = await this.submittingTeam(scope, body.teamId, p.since);
    if (!team) throw notFound('team', body.teamId);
    const idempotency = idempotencyKey ? { key: `${ownerOf(p)}|${team.id}|${idempotencyKey}`, bodyHash: requestHash(body) } : undefined;
    if (idempotency) {
      const earlier = await this.jobs.findByIdempotencyKey(scope, idempotency.key);
      if (earlier) return { job: await this.replay(scope, earlier, idempotency.bodyHash), replayed: true };
    }
    await this.validator.validate(body);
    await this.checkQuotaLimit(team, body);
    try {
      const row = await this.jobs.create(scope, body, { idempotencyKey: idempotency?.key, idempotencyBodyHash: idempotency?.bodyHash, keyId: p.keyId });
      await this.queues.requestSchedule(`job ${row.id} submitted`);
      // No queue position in the answer: computing it orders the tenant's whole queue, too much
      // for every submission under load; GET /v1/jobs/:id reports it once the scheduler has seen the job.
      return { job: presentJob(row, { now: new Date(), simSpeed: this.config.driver.simSpeed }), replayed: false };
    } catch (e) {
      if (idempotency && isUniqueViolation(e)) {
        const earlier = await this.jobs.findByIdempotencyKey(scope, idempotency.key);
        if (earlier) return { job: await this.replay(scope, earlier, idempotency.bodyHash), replayed: true };
      }
      throw e;
    }
  }

  private async replay(scope: TenantScope, earlier: JobRow & { idempotencyBodyHash: string | null }, bodyHash: string): Promise<Job> {
    if (earlier.idempotencyBodyHash !== null && earlier.idempotencyBodyHash !== bodyHash) {
      throw new DomainError('conflict', 'this Idempotency-Key was used with a different request body', [
        { field: 'Idempotency-Key', problem: 'already used for another request' },
      ]);
    }
    return this.present(scope, earlier);
  }

  async list(p: Principal, q: PageQuery & { teamId?: string; state?: string }): Promise<Page<Job>> {
    const scope = scopeOf(p);
    const rows = await this.jobs.list(scope, q, q);
    const [positions, lastRuns] = await Promise.all([
      this.positions.ofPage(scope, rows),
      this.jobs.lastRuns(
        scope,
        rows.filter(heldNothing).map((r) => r.id),
      ),
    ]);
    const now = new Date();
    return toPage(rows, q, (r) =>
      presentJob(r, { now, simSpeed: this.config.driver.simSpeed, queuePosition: positionOf(positions, r), lastRun: lastRuns.get(r.id) }),
    );
  }

  /** What the console's Overview shows of the jobs: how many in each state, and the head of the queue. */
  async summary(p: Principal, q: { teamId?: string }): Promise<JobsSummary> {
    const scope = scopeOf(p);
    const [counts, head] = await Promise.all([this.jobs.stateCounts(scope, q.teamId), this.positions.head(scope, QUEUE_HEAD_SIZE, q.teamId)]);
    const now = new Date();
    return {
      counts: Object.fromEntries(JOB_STATES.map((s) => [s, counts.get(s) ?? 0])) as JobsSummary['counts'],
      queueHead: head.map(({ row, position }) => presentJob(row, { now, simSpeed: this.config.driver.simSpeed, queuePosition: position })),
    };
  }

  async get(p: Principal, id: string): Promise<JobDetail> {
    const since = Date.now();
    const scope = scopeOf(p);
    const row = await this.jobs.find(scope, id);
    if (!row) throw notFound('job', id);
    const [events, queuePosition, lastRuns] = await Promise.all([
      this.jobs.listEvents(scope, id),
      this.positions.ofJob(scope, row, since),
      heldNothing(row) ? this.jobs.lastRuns(scope, [id]) : Promise.resolve(new Map<string, JobRow['allocations']>()),
    ]);
    return presentJobDetail(row, events, {
      now: new Date(),
      simSpeed: this.config.driver.simSpeed,
      queuePosition,
      lastRun: lastRuns.get(id),
    });
  }

  async cancel(p: Principal, id: string): Promise<Job> {
    const scope = scopeOf(p);
    const r = await this.jobs.cancel(scope, id, new Date());
    if (!r.job) throw notFound('job', id);
    if (!r.cancelled) throw new DomainError('invalid_state', `job ${id} is ${r.job.state} and cannot be cancelled`);
    // The driver may have started it meanwhile: stopping is idempotent, so always ask.
    await this.queues.lifecycle({ action: 'stop', jobId: id });
    await this.queues.requestSchedule(`job ${id} cancelled`);
    return this.present(scope, (await this.jobs.find(scope, id))!);
  }

  async suspend(p: Principal, id: string): Promise<Job> {
    const scope = scopeOf(p);
    const found = await this.jobs.find(scope, id);
    if (!found) throw notFound('job', id);
    if (!(SUSPENDABLE_KINDS as readonly string[]).includes(found.kind)) {
      throw new DomainError('invalid_state', `a ${found.kind} job cannot be suspended (only ${SUSPENDABLE_KINDS.join(', ')})`);
    }
    const r = await this.suspendOne(scope, id);
    if (!r.changed) throw new DomainError('invalid_state', `job ${id} is ${r.job?.state ?? found.state} and cannot be suspended`);
    return this.present(scope, (await this.jobs.find(scope, id))!);
  }

  /** Suspends every suspendable active job of a team (404 for a team outside the caller's scope). */
  async suspendTeam(p: Principal, teamId: string): Promise<{ suspended: number; jobIds: string[] }> {
    const scope = scopeOf(p);
    if (!(await this.teams.findTeam(scope, teamId))) throw notFound('team', teamId);
    return this.suspendTeamIn(scope, teamId);
  }

  /** Team suspend for a scope already checked (also used by suspend schedules). */
  async suspendTeamIn(scope: TenantScope, teamId: string): Promise<{ suspended: number; jobIds: string[] }> {
    const jobIds: string[] = [];
    for (const id of await this.jobs.suspendableIdsOfTeam(scope, teamId)) {
      if ((await this.suspendOne(scope, id)).changed) jobIds.push(id);
    }
    return { suspended: jobIds.length, jobIds };
  }

  /** Resumes every suspended job of a team; admission (quota, priority) is the scheduler's as for any pending job. */
  async resumeTeam(p: Principal, teamId: string): Promise<{ resumed: number; jobIds: string[] }> {
    const scope = scopeOf(p);
    if (!(await this.teams.findTeam(scope, teamId))) throw notFound('team', teamId);
    return this.resumeTeamIn(scope, teamId);
  }

  async resumeTeamIn(scope: TenantScope, teamId: string): Promise<{ resumed: number; jobIds: string[] }> {
    const jobIds: string[] = [];
    for (const id of await this.jobs.suspendedIdsOfTeam(scope, teamId)) {
      if ((await this.jobs.resume(scope, id)).changed) jobIds.push(id);
    }
    if (jobIds.length) await this.queues.requestSchedule(`team ${teamId} resumed (${jobIds.length} job(s))`);
    return { resumed: jobIds.length, jobIds };
  }

  /** One job's suspend for a scope already checked, without errors (suspend schedules): true when it changed. */
  async suspendJobIn(scope: TenantScope, id: string): Promise<boolean> {
    const found = await this.jobs.find(scope, id);
    if (!found || !(SUSPENDABLE_KINDS as readonly string[]).includes(found.kind)) return false;
    return (await this.suspendOne(scope, id)).changed;
  }

  /** One job's resume for a scope already checked, without errors (suspend schedules): true when it changed. */
  async resumeJobIn(scope: TenantScope, id: string): Promise<boolean> {
    const r = await this.jobs.resume(scope, id);
    if (r.changed) await this.queues.requestSchedule(`job ${id} resumed`);
    return r.changed;
  }

  /** The suspend transition and, for a placed job, the checkpoint request to the worker. */
  private async suspendOne(scope: TenantScope, id: string) {
    const r = await this.jobs.suspend(scope, id);
    if (r.to === 'suspending') await this.queues.lifecycle({ action: 'suspend', jobId: id });
    return r;
  }

  async resume(p: Principal, id: string): Promise<Job> {
    const scope = scopeOf(p);
    const r = await this.jobs.resume(scope, id);
    if (!r.job) throw notFound('job', id);
    if (!r.changed) throw new DomainError('invalid_state', `job ${id} is ${r.job.state} and cannot be resumed (only suspended jobs can)`);
    await this.queues.requestSchedule(`job ${id} resumed`);
    return this.present(scope, (await this.jobs.find(scope, id))!);
  }

  /**
   * The team a job is submitted to, with its quotas and tenant: cached per process until a quota
   * or tenant total changes anywhere (ChangeEpoch 'teams'), and checked against the caller's
   * scope on every use, as the query would (another tenant's or another team's: null, 404).
   * `since`: when the request began (Principal.since), so the counter read with its key is reused.
   */
  private async submittingTeam(scope: TenantScope, teamId: string, since?: number): Promise<TeamWithQuotas | null> {
    const team = await this.teamCache.get(teamId, () => this.quotas.findTeam(scope, teamId), undefined, since);
    return team && covers(scope, { tenantId: team.tenantId, teamId: team.id }) ? team : null;
  }

  /**
   * GPUs of a model (or all) in the cluster, re-read every few seconds (never trusted while zero:
   * the inventory may be loading). Submissions that arrive while it is read share the read.
   */
  private async clusterGpus(gpuModel: string | undefined, nowMs = Date.now()): Promise<number> {
    const key = gpuModel ?? '*';
    const hit = this.gpuCounts.get(key);
    if (hit && nowMs - hit.at < GPU_COUNT_MS) return hit.n;
    const n = this.cluster.gpuCount(gpuModel);
    this.gpuCounts.set(key, { at: nowMs, n });
    try {
      if ((await n) > 0) return await n;
    } catch (e) {
      if (this.gpuCounts.get(key)?.n === n) this.gpuCounts.delete(key);
      throw e;
    }
    if (this.gpuCounts.get(key)?.n === n) this.gpuCounts.delete(key);
    return 0;
  }

  /** The quota rules of submission (see quota-coverage): covered, within the limit, borrowing only when preemptible. */
  private async checkQuotaLimit(team: TeamWithQuotas, body: JobCreateParsed): Promise<void> {
    checkFitsQuota(
      {
        rows: team.quotas.map((q) => ({ gpuModel: q.gpuModel, guaranteed: Number(q.guaranteed), limit: Number(q.limit) })),
        tenantTotal: team.tenant.gpuTotal == null ? null : Number(team.tenant.gpuTotal),
        clusterGpus: await this.clusterGpus(body.resources.gpuModel),
      },
      {
        gpuModel: body.resources.gpuModel,
        units: replicaGpuUnits(body.resources) * body.replicas,
        mayBorrow: body.preemptible && body.priority !== 'critical',
        what: 'the job',
      },
      { size: 'resources', borrow: 'preemptible' },
    );
  }

  private async present(scope: TenantScope, row: JobRow): Promise<Job> {
    const queuePosition = await this.positions.ofJob(scope, row);
    return presentJob(row, { now: new Date(), simSpeed: this.config.driver.simSpeed, queuePosition });
  }
}

/** A job that ran and holds no GPU now (ended, suspended, requeued): where it ran is worth showing. */
const heldNothing = (r: JobRow) => r.allocations.length === 0 && r.startedAt !== null;

const positionOf = (positions: Map<string, number>, row: { id: string; state: string }) => (row.state === 'pending' ? positions.get(row.id) : undefined);
