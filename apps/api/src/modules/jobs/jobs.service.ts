import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Job, JobCreateParsed, JobDetail, Page, PageQuery } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError, notFound } from '../../common/errors';
import { isUniqueViolation } from '../../common/prisma-errors';
import { toPage } from '../../common/pagination';
import { ownerOf, scopeOf, type Principal } from '../../common/principal';
import { type TenantScope } from '../../common/tenant-scope';
import { QueuesService } from '../../queues/queues.service';
import { TenantsRepository } from '../tenants/tenants.repository';
import { JobsRepository, SUSPENDABLE_KINDS, type JobRow } from './jobs.repository';
import { presentJob, presentJobDetail } from './jobs.presenter';
import { replicaGpuUnits } from '../quotas/job-units';
import { JobRequestValidator } from './job-request.validator';
import { checkFitsQuota } from '../quotas/quota-coverage';
import { QuotasRepository } from '../quotas/quotas.repository';
import { FairShareService } from '../fair-share/fair-share.service';

/** sha256 of a request body as parsed (defaults filled), to tell a retry from a reuse of its key. */
const requestHash = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

@Injectable()
export class JobsService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly teams: TenantsRepository,
    private readonly validator: JobRequestValidator,
    private readonly quotas: QuotasRepository,
    private readonly queues: QueuesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly fairShare: FairShareService,
  ) {}

  /**
   * Submits a job. An `Idempotency-Key` is the caller's own (scoped to its owner and the team):
   * a retry with the same key and body answers the first job, the same key with another body
   * is refused (409), and another caller's identical key is a different key.
   */
  async submit(p: Principal, body: JobCreateParsed, idempotencyKey?: string): Promise<{ job: Job; replayed: boolean }> {
    const scope = scopeOf(p);
    if (scope.kind !== 'tenant') throw new DomainError('forbidden', 'jobs are submitted with a tenant or team key');
    const team = await this.teams.findTeam(scope, body.teamId);
    if (!team) throw notFound('team', body.teamId);
    const idempotency = idempotencyKey ? { key: `${ownerOf(p)}|${team.id}|${idempotencyKey}`, bodyHash: requestHash(body) } : undefined;
    if (idempotency) {
      const earlier = await this.jobs.findByIdempotencyKey(scope, idempotency.key);
      if (earlier) return { job: await this.replay(scope, earlier, idempotency.bodyHash), replayed: true };
    }
    await this.validator.validate(body);
    await this.checkQuotaLimit(scope, team.id, body);
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
    const order = rows.some((r) => r.state === 'pending') ? await this.pendingOrder(scope) : [];
    const now = new Date();
    return toPage(rows, q, (r) => presentJob(r, { now, simSpeed: this.config.driver.simSpeed, queuePosition: position(order, r) }));
  }

  async get(p: Principal, id: string): Promise<JobDetail> {
    const scope = scopeOf(p);
    const row = await this.jobs.find(scope, id);
    if (!row) throw notFound('job', id);
    const [events, order] = await Promise.all([this.jobs.listEvents(scope, id), row.state === 'pending' ? this.pendingOrder(scope) : Promise.resolve([])]);
    return presentJobDetail(row, events, { now: new Date(), simSpeed: this.config.driver.simSpeed, queuePosition: position(order, row) });
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

  /** The quota rules of submission (see quota-coverage): covered, within the limit, borrowing only when preemptible. */
  private async checkQuotaLimit(scope: TenantScope, teamId: string, body: JobCreateParsed): Promise<void> {
    checkFitsQuota(
      await this.quotas.bounds(scope, teamId, body.resources.gpuModel),
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
    const order = row.state === 'pending' ? await this.pendingOrder(scope) : [];
    return presentJob(row, { now: new Date(), simSpeed: this.config.driver.simSpeed, queuePosition: position(order, row) });
  }

  /** Queue order as the cycle sees it: priority, fair share with each team's decayed history, age. */
  async pendingOrder(scope: TenantScope): Promise<string[]> {
    return this.jobs.pendingOrder(scope, { gpus: await this.fairShare.historyGpus(scope), weight: this.fairShare.params.historyWeight });
  }
}

function position(order: string[], row: { id: string; state: string }): number | undefined {
  if (row.state !== 'pending') return undefined;
  const i = order.indexOf(row.id);
  return i >= 0 ? i + 1 : undefined;
}
