import { Inject, Injectable } from '@nestjs/common';
import type {
  Endpoint,
  EndpointCreateParsed,
  EndpointDetail,
  EndpointInvoke,
  EndpointInvokeResult,
  EndpointUpdate,
  JobResources,
  Page,
  PageQuery,
  SimTraffic,
  SimTrafficAccepted,
} from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { checkFitsQuota, coveringRows, noQuotaMessage } from '../quotas/quota-coverage';
import { QuotasRepository } from '../quotas/quotas.repository';
import { DomainError, notFound } from '../../common/errors';
import { isUniqueViolation } from '../../common/prisma-errors';
import { toPage } from '../../common/pagination';
import { scopeOf, type Principal } from '../../common/principal';
import { type TenantScope } from '../../common/tenant-scope';
import { QueuesService } from '../../queues/queues.service';
import { TenantsRepository } from '../tenants/tenants.repository';
import { JobRequestValidator } from '../jobs/job-request.validator';
import { replicaGpuUnits } from '../quotas/job-units';
import { EndpointsRepository, type EndpointRow } from './endpoints.repository';
import { presentEndpoint, presentEndpointDetail } from './endpoints.presenter';
import { EndpointTraffic } from './endpoint-traffic.service';
import { ReplicaReadiness } from './replica-readiness.service';
import { MetricsRecorder } from '../metrics/metrics.recorder';

/** How long the activator holds a request at zero before answering 503. */
const ACTIVATOR_TIMEOUT_MS = 60_000;
/** Between checks of Postgres while no readiness announcement came (a lost one costs at most this). */
const ACTIVATOR_FALLBACK_POLL_MS = 200;
/** A manual scale holds for one stable window; then the autoscaler decides again. */
export const MANUAL_HOLD_SECONDS = 60;

@Injectable()
export class EndpointsService {
  constructor(
    private readonly endpoints: EndpointsRepository,
    private readonly teams: TenantsRepository,
    private readonly validator: JobRequestValidator,
    private readonly traffic: EndpointTraffic,
    private readonly queues: QueuesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsRecorder,
    private readonly quotas: QuotasRepository,
    private readonly readiness: ReplicaReadiness,
  ) {}

  async create(p: Principal, body: EndpointCreateParsed): Promise<Endpoint> {
    const scope = tenantScope(p);
    const team = await this.teams.findTeam(scope, body.teamId);
    if (!team) throw notFound('team', body.teamId);
    await this.validator.validate({
      teamId: body.teamId,
      name: body.name,
      kind: 'batch',
      priority: 'high',
      replicas: 1,
      resources: body.resources,
      topology: { level: 'any', required: false },
      preemptible: false,
    });
    await this.checkQuota(scope, team.id, body.resources, body.minReplicas + body.warmPool, 0, 'limit');
    try {
      const row = await this.endpoints.create(scope, body);
      if (row.desiredReplicas + row.warmPool > 0) await this.queues.requestSchedule(`endpoint ${row.id} created`);
      return presentEndpoint(row, []);
    } catch (e) {
      if (isUniqueViolation(e))
        throw new DomainError('conflict', `an endpoint named ${body.name} already exists`, [{ field: 'name', problem: 'already exists' }]);
      throw e;
    }
  }

  async list(p: Principal, q: PageQuery & { teamId?: string }): Promise<Page<Endpoint>> {
    const scope = scopeOf(p);
    const rows = await this.endpoints.list(scope, q, q);
    const cold = await this.endpoints.coldStartDurations(
      scope,
      rows.map((r) => r.id),
    );
    return toPage(rows, q, (r) => presentEndpoint(r, cold.get(r.id) ?? []));
  }

  async get(p: Principal, id: string): Promise<EndpointDetail> {
    const scope = scopeOf(p);
    const row = await this.mustFind(scope, id);
    const [cold, samples, state, reasons] = await Promise.all([
      this.endpoints.coldStartDurations(scope, [id]),
      this.traffic.samples(id),
      this.traffic.state(id),
      this.traffic.reasons(id),
    ]);
    return presentEndpointDetail(row, cold.get(id) ?? [], {
      traffic: samples.map((s) => ({ t: s.t, rps: s.rps, concurrency: s.concurrency })),
      autoscaler: state,
      reasons,
    });
  }

  async update(p: Principal, id: string, patch: EndpointUpdate): Promise<EndpointDetail> {
    const scope = scopeOf(p);
    const row = await this.mustFind(scope, id);
    const min = patch.minReplicas ?? row.minReplicas;
    const max = patch.maxReplicas ?? row.maxReplicas;
    if (min > max) {
      throw new DomainError('validation_failed', `minReplicas (${min}) must not exceed maxReplicas (${max})`, [
        { field: 'minReplicas', problem: `greater than maxReplicas ${max}` },
      ]);
    }
    const desired = Math.min(max, Math.max(min, row.desiredReplicas));
    await this.checkQuota(scope, row.teamId, row.resources as JobResources, desired + (patch.warmPool ?? row.warmPool), heldUnits(row), 'free');
    await this.endpoints.update(scope, id, { ...patch, desiredReplicas: desired });
    await this.queues.requestSchedule(`endpoint ${id} updated`);
    return this.get(p, id);
  }

  /** Manual scale: 409 beyond maxReplicas or beyond the team's quota; held for one stable window. */
  async scale(p: Principal, id: string, replicas: number): Promise<EndpointDetail> {
    const scope = scopeOf(p);
    const row = await this.mustFind(scope, id);
    if (replicas > row.maxReplicas) {
      throw new DomainError('conflict', `cannot scale to ${replicas} replicas: maxReplicas is ${row.maxReplicas}`, [
        { field: 'replicas', problem: `exceeds maxReplicas ${row.maxReplicas}` },
      ]);
    }
    if (replicas < row.minReplicas) {
      throw new DomainError('conflict', `cannot scale to ${replicas} replicas: minReplicas is ${row.minReplicas}`, [
        { field: 'replicas', problem: `below minReplicas ${row.minReplicas}` },
      ]);
    }
    await this.checkQuota(scope, row.teamId, row.resources as JobResources, replicas + row.warmPool, heldUnits(row), 'free');
    await this.endpoints.scale(scope, id, replicas, new Date(Date.now() + MANUAL_HOLD_SECONDS * 1000));
    await this.queues.requestSchedule(`endpoint ${id} scaled to ${replicas}`);
    return this.get(p, id);
  }

  async remove(p: Principal, id: string): Promise<void> {
    const scope = scopeOf(p);
    if (!(await this.endpoints.softDelete(scope, id, new Date()))) throw notFound('endpoint', id);
  }

  /**
   * The activator: a request at zero serving replicas is held until a replica is ready (a warm
   * one is promoted at once; otherwise the scheduling cycle places one and the worker loads the
   * model). The first such request records the cold start.
   */
  async invoke(p: Principal, id: string, body: EndpointInvoke): Promise<EndpointInvokeResult> {
    const scope = scopeOf(p);
    // Independent round trips go out together: on a cold start every one is on the request's path.
    const t0 = Date.now();
    // (both scoped: a serving replica of an endpoint outside the scope is never found)
    const [row, now] = await Promise.all([this.endpoints.findForInvoke(scope, id), this.endpoints.servingReplica(scope, id)]);
    if (!row) throw notFound('endpoint', id);
    if (now) {
      await Promise.all([this.traffic.recordRequest(id, t0), this.endpoints.touch(scope, id, new Date(t0))]);
      return this.answer(row, now.replica, body, false, 0);
    }
    // Held before the activation: the autoscaler never sees the wanted replica without the request that wants it.
    const [leader] = await Promise.all([this.traffic.beginColdStart(id, t0), this.traffic.hold(id), this.traffic.recordRequest(id, t0)]);
    try {
      const warm = await this.endpoints.activate(scope, id, new Date(t0));
      if (!warm) await this.queues.requestSchedule(`endpoint ${id} activated`);
      for (;;) {
        // listening before the check: a replica made ready between the two wakes this round
        const announced = this.readiness.next(id, ACTIVATOR_FALLBACK_POLL_MS);
        const rep = await this.endpoints.servingReplica(scope, id);
        if (rep) {
          const readyAt = new Date();
          await Promise.all([
            this.endpoints.touch(scope, id, readyAt),
            leader && scope.kind === 'tenant'
              ? Promise.all([this.endpoints.recordColdStart(scope, id, { startedAt: new Date(t0), readyAt, warm }), this.metrics.inc('cold_starts')])
              : undefined,
          ]);
          return this.answer(row, rep.replica, body, true, readyAt.getTime() - t0);
        }
        if (Date.now() - t0 > ACTIVATOR_TIMEOUT_MS) {
          throw new DomainError('unavailable', `no replica of endpoint ${row.name} became ready within ${ACTIVATOR_TIMEOUT_MS / 1000} s`);
        }
        await announced;
      }
    } finally {
      await Promise.all([this.traffic.release(id), leader ? this.traffic.endColdStart(id) : undefined]);
    }
  }

  /** Simulated traffic (simulated driver only): the autoscaler sees `rps` for `durationSeconds`. */
  async simTraffic(p: Principal, body: SimTraffic): Promise<SimTrafficAccepted> {
    if (!this.config.driver.simulated) throw new DomainError('invalid_state', 'simulated traffic needs the simulated driver');
    const scope = scopeOf(p);
    await this.mustFind(scope, body.endpointId);
    const fromMs = Date.now();
    const untilMs = fromMs + body.durationSeconds * 1000;
    await this.traffic.setSimTraffic(body.endpointId, { rps: body.rps, fromMs, untilMs });
    return { endpointId: body.endpointId, rps: body.rps, until: new Date(untilMs).toISOString() };
  }

  private answer(row: Pick<EndpointRow, 'id' | 'model'>, replica: number, body: EndpointInvoke, coldStart: boolean, waitedMs: number): EndpointInvokeResult {
    const input = (body.input ?? '').slice(0, 60);
    return { endpointId: row.id, replica, output: `simulated response of ${row.model} (replica ${replica}) to "${input}"`, coldStart, waitedMs };
  }

  private async mustFind(scope: TenantScope, id: string): Promise<EndpointRow> {
    const row = await this.endpoints.find(scope, id);
    if (!row) throw notFound('endpoint', id);
    return row;
  }

  /**
   * Quota: `limit` refuses what could never fit the team's limit (create); `free` refuses
   * what does not fit what the team has left now, counting what this endpoint already holds.
   */
  private async checkQuota(
    scope: TenantScope,
    teamId: string,
    resources: JobResources,
    replicas: number,
    heldByEndpoint: number,
    mode: 'limit' | 'free',
  ): Promise<void> {
    const bounds = await this.quotas.bounds(scope, teamId, resources.gpuModel);
    const rows = bounds.rows;
    const want = replicaGpuUnits(resources) * replicas;
    if (mode === 'limit') {
      // Replicas are preemptible serving work: they may borrow up to the limit.
      checkFitsQuota(bounds, { gpuModel: resources.gpuModel, units: want, mayBorrow: true, what: `${replicas} replica(s)` }, { size: 'minReplicas' });
      return;
    }
    const usage = await this.quotas.inUseByModel(scope, teamId);
    for (const quota of coveringRows(rows, resources.gpuModel)) {
      const limit = quota.limit;
      const scopeName = quota.gpuModel === '*' ? 'all GPU models' : quota.gpuModel;
      const inUse = quota.gpuModel === '*' ? [...usage.values()].reduce((s, n) => s + n, 0) : (usage.get(quota.gpuModel) ?? 0);
      const projected = inUse - heldByEndpoint + want;
      if (projected > limit + 1e-9) {
        throw new DomainError(
          'quota_exceeded',
          `${replicas} replica(s) need ${round(want)} GPUs; the team uses ${round(inUse)} of its ${round(limit)} GPU limit for ${scopeName} (this endpoint holds ${round(heldByEndpoint)})`,
          [{ field: 'replicas', problem: `would use ${round(projected)} GPUs > limit ${round(limit)}` }],
        );
      }
    }
    if (!coveringRows(rows, resources.gpuModel).length) {
      throw new DomainError('quota_exceeded', noQuotaMessage(rows, resources.gpuModel), [{ field: 'replicas', problem: 'no quota covers it' }]);
    }
  }
}

function tenantScope(p: Principal): TenantScope & { kind: 'tenant' } {
  const scope = scopeOf(p);
  if (scope.kind !== 'tenant') throw new DomainError('forbidden', 'endpoints are created with a tenant or team key');
  return scope;
}

const heldUnits = (row: EndpointRow) => row.allocations.reduce((s, a) => s + Number(a.gpuUnits), 0);
const round = (n: number) => Math.round(n * 1000) / 1000;
