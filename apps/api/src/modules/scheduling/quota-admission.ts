import { coveringRows, noQuotaMessage } from '../quotas/quota-coverage';
import type { Reason } from '@gantry/contracts';

export interface AdmissionJob {
  id: string;
  teamId: string;
  gpuModel?: string;
  /** GPU units the whole job needs (all replicas). */
  units: number;
  /**
   * May the job run on borrowed quota? Work above `guaranteed` can be reclaimed, so only jobs
   * that may be preempted borrow (KAI: non-preemptible work stays within its deserved quota).
   * Default true.
   */
  canBorrow?: boolean;
  /** Admit only if preemptible work is allowed by the team's budget policy. */
  preemptible?: boolean;
}

export interface TeamQuota {
  teamId: string;
  gpuModel: string;
  limit: number;
  /** Default: equal to `limit` (nothing to borrow). */
  guaranteed?: number;
}

/** The cohort of Kueue: the teams of one tenant lend each other their idle guaranteed GPUs. */
export interface AdmissionContext {
  /** Team -> tenant. Teams missing here form no cohort (no borrowing above guaranteed). */
  tenantOf?: Map<string, string>;
  /** Tenant GPU totals (platform admin); null = none. */
  tenantTotals?: Map<string, number | null>;
  /** Teams whose monthly GPU-hour budget is spent, with what the policy then allows. */
  budgets?: Map<string, { exhausted: boolean; policy: 'block' | 'preemptible-only'; gpuHours: number; budget: number }>;
}

export interface Held {
  jobId: string;
  reasons: Reason[];
  /** Which rule held it: the preemption planner acts on `quota_limit` and `borrow_not_allowed` (lower priority in the team). */
  rule: 'quota_limit' | 'borrow_not_allowed' | 'cohort_exhausted' | 'tenant_total' | 'budget_exhausted' | 'no_quota';
  /**
   * GPUs to free for the job to fit: its team's (limit, or guaranteed share for work that may
   * not borrow), or for `tenant_total` its tenant's borrowers'.
   */
  excess?: number;
  /** The job would run above its team's guaranteed quota. */
  borrowing?: boolean;
}

const EPS = 1e-9;

/**
 * Step 3 of the cycle, admission (Kueue's ClusterQueue/cohort semantics, KAI's queues):
 *   - within the team's `guaranteed` GPUs for the flavour -> admit;
 *   - above it, borrow idle GPUs of the tenant's pool (the cohort: the tenant total, of which the
 *     other teams' unused guaranteed GPUs are part; no total = the cluster's idle GPUs), up to `limit`;
 *     only work that may be preempted borrows, and it is marked `borrowing` (reclaimable);
 *   - never above `limit`, never above the tenant total, never past a spent budget (per policy).
 * A job checks its model's row and the `*` row (the team's total over every model); capacity is
 * deny-by-default: a job that no row covers is held (`no_quota`) until an admin grants a quota.
 * Jobs come in queue order; each admitted job counts for the ones after it.
 */
export function admit<J extends AdmissionJob>(
  jobs: J[],
  usage: { teamId: string; gpuModel: string; units: number }[],
  quotas: TeamQuota[],
  ctx: AdmissionContext = {},
): { admitted: J[]; borrowing: Set<string>; held: Held[] } {
  const used = new Map<string, number>();
  const add = (k: string, n: number) => used.set(k, (used.get(k) ?? 0) + n);
  const tenantUsed = new Map<string, number>();
  const addTenant = (team: string, n: number) => {
    const t = ctx.tenantOf?.get(team);
    if (t) tenantUsed.set(t, (tenantUsed.get(t) ?? 0) + n);
  };
  for (const u of usage) {
    add(`${u.teamId}|${u.gpuModel}`, u.units);
    add(`${u.teamId}|*`, u.units);
    addTenant(u.teamId, u.units);
  }
  /** What the team holds now, before this cycle admits anything (the rest of `used` is queued work admitted ahead). */
  const held0 = new Map(used);
  const inUseText = (key: string, inUse: number, of: string) => {
    const running = held0.get(key) ?? 0;
    const ahead = inUse - running;
    return `${fmt(running)}/${fmt(Number(of))} GPUs in use${ahead > EPS ? ` and ${fmt(ahead)} admitted ahead of this job` : ''}`;
  };
  const rowsOf = new Map<string, TeamQuota[]>();
  for (const q of quotas) rowsOf.set(q.teamId, [...(rowsOf.get(q.teamId) ?? []), q]);
  const guaranteedOf = (q: TeamQuota) => q.guaranteed ?? q.limit;

  /**
   * The cohort pool of a flavour: what the tenant's teams with a row of that flavour hold,
   * against the tenant total (at least their guaranteed sum). A tenant without a total borrows
   * whatever the cluster has idle: the engine decides what fits, reclaim gives it back.
   */
  const pool = (tenant: string, gpuModel: string) => {
    let cap = 0;
    let inUse = 0;
    for (const q of quotas) {
      if (q.gpuModel !== gpuModel || ctx.tenantOf?.get(q.teamId) !== tenant) continue;
      cap += guaranteedOf(q);
      inUse += used.get(`${q.teamId}|${gpuModel}`) ?? 0;
    }
    const total = ctx.tenantTotals?.get(tenant);
    return { cap: total != null ? Math.max(cap, total) : Number.POSITIVE_INFINITY, inUse };
  };

  const admitted: J[] = [];
  const borrowing = new Set<string>();
  const held: Held[] = [];
  /** Decides one job against the usage so far; `deferBorrowing` leaves jobs that would borrow for later. */
  const decide = (job: J, deferBorrowing: boolean): 'admitted' | 'held' | 'deferred' => {
    const budget = ctx.budgets?.get(job.teamId);
    if (budget?.exhausted && (budget.policy === 'block' || !job.preemptible)) {
      held.push({
        jobId: job.id,
        rule: 'budget_exhausted',
        reasons: [
          {
            code: 'budget_exhausted',
            message: `team GPU-hour budget spent (${fmt(budget.gpuHours)}/${fmt(budget.budget)} GPU-hours this month)${budget.policy === 'preemptible-only' ? '; only preemptible jobs are admitted' : ''}`,
          },
        ],
      });
      return 'held';
    }
    const teamRows = rowsOf.get(job.teamId) ?? [];
    const rows = coveringRows(teamRows, job.gpuModel);
    if (!rows.length) {
      held.push({ jobId: job.id, rule: 'no_quota', reasons: [{ code: 'no_quota', message: noQuotaMessage(teamRows, job.gpuModel) }] });
      return 'held';
    }
    let hold: Held | null = null;
    let borrows = false;
    for (const q of rows) {
      const inUse = used.get(`${job.teamId}|${q.gpuModel}`) ?? 0;
      const scope = q.gpuModel === '*' ? 'GPUs' : `${q.gpuModel} GPUs`;
      if (inUse + job.units > q.limit + EPS) {
        hold = {
          jobId: job.id,
          rule: 'quota_limit',
          excess: inUse + job.units - q.limit,
          reasons: [
            {
              code: 'quota_limit',
              message: `team quota for ${q.gpuModel === '*' ? 'all GPU models' : q.gpuModel}: ${inUseText(`${job.teamId}|${q.gpuModel}`, inUse, String(q.limit))}; this job needs ${fmt(job.units)}`,
            },
          ],
        };
        break;
      }
      if (inUse + job.units <= guaranteedOf(q) + EPS) continue;
      // Above guaranteed: borrowing.
      if (job.canBorrow === false) {
        hold = {
          jobId: job.id,
          rule: 'borrow_not_allowed',
          excess: inUse + job.units - guaranteedOf(q),
          reasons: [
            {
              code: 'borrow_not_allowed',
              message: `team guaranteed quota ${fmt(inUse)}/${fmt(guaranteedOf(q))} ${scope} in use; only preemptible jobs below critical priority may borrow above it (limit ${fmt(q.limit)})`,
            },
          ],
        };
        break;
      }
      if (deferBorrowing) return 'deferred';
      const tenant = ctx.tenantOf?.get(job.teamId);
      const p = tenant ? pool(tenant, q.gpuModel) : { cap: Number.POSITIVE_INFINITY, inUse: 0 };
      if (p.inUse + job.units > p.cap + EPS) {
        hold = {
          jobId: job.id,
          rule: 'cohort_exhausted',
          reasons: [
            {
              code: 'cohort_exhausted',
              message: `borrowing: team at ${fmt(inUse)}/${fmt(guaranteedOf(q))} guaranteed ${scope}; the tenant's pool has ${fmt(Math.max(0, p.cap - p.inUse))} idle, this job needs ${fmt(job.units)}`,
            },
          ],
        };
        break;
      }
      borrows = true;
    }
    const tenant = ctx.tenantOf?.get(job.teamId);
    const total = tenant ? ctx.tenantTotals?.get(tenant) : null;
    if (!hold && tenant && total != null && (tenantUsed.get(tenant) ?? 0) + job.units > total + EPS) {
      const inUse = tenantUsed.get(tenant) ?? 0;
      hold = {
        jobId: job.id,
        rule: 'tenant_total',
        excess: inUse + job.units - total,
        borrowing: borrows,
        reasons: [
          {
            code: 'tenant_total',
            message: `tenant total ${fmt(inUse)}/${fmt(total)} GPUs in use; this job needs ${fmt(job.units)} more${borrows ? '' : ' (within its team guaranteed quota: reclaimed from borrowers)'}`,
          },
        ],
      };
    }
    if (hold) {
      held.push(hold);
      return 'held';
    }
    add(`${job.teamId}|*`, job.units);
    if (job.gpuModel) add(`${job.teamId}|${job.gpuModel}`, job.units);
    addTenant(job.teamId, job.units);
    if (borrows) borrowing.add(job.id);
    admitted.push(job);
    return 'admitted';
  };
  // As Kueue does: work within its team's guaranteed quota is admitted before work that would
  // borrow, so that a requeued borrower never takes back what a lender is reclaiming.
  const deferred = jobs.filter((job) => decide(job, true) === 'deferred');
  for (const job of deferred) decide(job, false);
  const order = new Map(jobs.map((j, i) => [j.id, i]));
  admitted.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  held.sort((a, b) => order.get(a.jobId)! - order.get(b.jobId)!);
  return { admitted, borrowing, held };
}

export const fmt = (n: number) => String(Math.round(n * 1000) / 1000);
