import { Injectable, Logger } from '@nestjs/common';
import { ZPlannerResult, ZPlannerRunCreate, type PlannerRun, type PlannerRunSpec } from '@gantry/contracts';
import { PlannerInputError, resolveSpec, runPlanInThread, type InputProblem, type SuppliedInput } from '@gantry/planner';
import type { Prisma } from '@gantry/db';
import { DomainError, notFound } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import type { TenantScope } from '../../common/tenant-scope';
import { historyJobs, inventoryNodes, topologyFileNodes } from './planner-inputs';
import { QueuesService } from '../../queues/queues.service';
import { PlannerRepository } from './planner.repository';

type Row = NonNullable<Awaited<ReturnType<PlannerRepository['byId']>>>;

/** How long a replay may run before it is stopped and failed (GANTRY_PLANNER_TIMEOUT_MS, default 15 min). */
const runTimeoutMs = () => Number(process.env.GANTRY_PLANNER_TIMEOUT_MS ?? 15 * 60_000);
/** How often a running replay writes its progress and looks for a cancel. */
const POLL_MS = 500;

/** The what-if planner: runs are checked here, queued, and replayed by the worker on a thread. */
@Injectable()
export class PlannerService {
  private readonly logger = new Logger('planner');

  constructor(
    private readonly runs: PlannerRepository,
    private readonly queues: QueuesService,
  ) {}

  async create(p: Principal, spec: PlannerRunSpec): Promise<PlannerRun> {
    mayPlan(p);
    try {
      resolveSpec(spec, await this.supplied(runScope(scopeOf(p).kind === 'platform' ? null : p.tenantId), spec));
    } catch (e) {
      if (e instanceof PlannerInputError) throw inputError(e.problems);
      throw e;
    }
    const row = await this.runs.create(scopeOf(p), { createdByKeyId: p.keyId, spec: spec as unknown as Prisma.InputJsonValue, policies: spec.policies });
    await this.queues.planner(row.id);
    return present(row);
  }

  async get(p: Principal, id: string): Promise<PlannerRun> {
    mayPlan(p);
    const row = await this.runs.find(scopeOf(p), id);
    if (!row) throw notFound('planner run', id);
    return present(row);
  }

  async list(p: Principal): Promise<{ items: PlannerRun[] }> {
    mayPlan(p);
    return { items: (await this.runs.list(scopeOf(p))).map((r) => present({ ...r, result: null })) };
  }

  async cancel(p: Principal, id: string): Promise<PlannerRun> {
    mayPlan(p);
    const scope = scopeOf(p);
    if (!(await this.runs.find(scope, id))) throw notFound('planner run', id);
    if (!(await this.runs.requestCancel(scope, id))) throw new DomainError('conflict', `planner run ${id} has already ended`);
    // it ends now; a running replay's worker sees the request at its next poll and stops the thread
    await this.runs.finish(id, { status: 'cancelled', error: 'cancelled by request' });
    return present((await this.runs.find(scope, id))!);
  }

  /** The worker: replays a run on a thread, writing progress, stopping on cancel or timeout. */
  async execute(id: string): Promise<{ status: string }> {
    if (!(await this.runs.claim(id))) return { status: 'skipped' };
    const row = (await this.runs.byId(id))!;
    let progress = 0;
    let spec: PlannerRunSpec;
    try {
      spec = ZPlannerRunCreate.parse(row.spec);
    } catch (e) {
      await this.runs.finish(id, { status: 'failed', error: `the stored specification is not valid: ${(e as Error).message}` });
      return { status: 'failed' };
    }
    let supplied: SuppliedInput;
    try {
      // the run's own tenant: a tenant admin's run replays its tenant's history only
      supplied = await this.supplied(runScope(row.tenantId), spec);
    } catch (e) {
      const reason = e instanceof PlannerInputError ? e.message : `the cluster's data could not be read: ${(e as Error).message}`;
      await this.runs.finish(id, { status: 'failed', error: reason });
      return { status: 'failed' };
    }
    const run = runPlanInThread(spec, { onProgress: (f) => (progress = f), timeoutMs: runTimeoutMs(), supplied });
    let cancelled = false;
    const poll = setInterval(() => {
      this.runs.progress(id, progress).then(
        (cancel) => {
          if (cancel && !cancelled) {
            cancelled = true;
            void run.cancel('cancelled by request');
          }
        },
        (e: unknown) => this.logger.warn(`planner run ${id}: progress not written: ${(e as Error).message}`),
      );
    }, POLL_MS);
    try {
      const result = ZPlannerResult.parse(await run.result);
      await this.runs.finish(id, { status: 'succeeded', result: result as unknown as Prisma.InputJsonValue });
      return { status: 'succeeded' };
    } catch (e) {
      const reason = (e as Error).message;
      await this.runs.finish(id, cancelled ? { status: 'cancelled', error: 'cancelled by request' } : { status: 'failed', error: reason });
      this.logger.warn(`planner run ${id} ${cancelled ? 'cancelled' : `failed: ${reason}`}`);
      return { status: cancelled ? 'cancelled' : 'failed' };
    } finally {
      clearInterval(poll);
    }
  }

  /** What a `history` workload, an `inventory` cluster (the database, for this scope) or a `topology` file gives the replay. */
  private async supplied(scope: TenantScope, spec: PlannerRunSpec): Promise<SuppliedInput> {
    const now = new Date();
    const out: SuppliedInput = {};
    if (spec.workload.kind === 'history')
      out.jobs = historyJobs(await this.runs.history(scope, new Date(now.getTime() - spec.workload.days * 86_400_000)), now);
    if (spec.cluster.kind === 'inventory') out.nodes = inventoryNodes(await this.runs.inventory());
    if (spec.cluster.kind === 'topology') out.nodes = topologyFileNodes(spec.cluster.json);
    return out;
  }
}

/**
 * Whose history a run replays: the run's tenant (a tenant admin's run: its whole tenant, as its
 * runs are its tenant's, not a team's), or every tenant (a platform admin's run).
 */
function runScope(tenantId: string | null): TenantScope {
  return tenantId ? { kind: 'tenant', tenantId, teamId: null } : { kind: 'platform' };
}

/** Operators and tenant admins plan; a tenant admin's runs are its tenant's. */
function mayPlan(p: Principal): void {
  if (p.role !== 'platform-admin' && p.role !== 'tenant-admin') throw new DomainError('forbidden', 'the planner is for platform and tenant admins');
}

function inputError(problems: InputProblem[]): DomainError {
  const details = problems.map((x) => ({ field: `${x.source}${x.row === null ? '' : `[row ${x.row}]`}.${x.field}`, problem: x.problem }));
  return new DomainError('validation_failed', `invalid planner input: ${details.map((d) => `${d.field} ${d.problem}`).join('; ')}`, details);
}

function present(r: Omit<Row, 'spec'> & { result: unknown }): PlannerRun {
  return {
    id: r.id,
    status: r.status,
    progress: r.progress,
    error: r.error,
    policies: r.policies as PlannerRun['policies'],
    createdAt: r.createdAt.toISOString(),
    startedAt: r.startedAt?.toISOString() ?? null,
    finishedAt: r.finishedAt?.toISOString() ?? null,
    result: (r.result ?? null) as PlannerRun['result'],
  };
}
