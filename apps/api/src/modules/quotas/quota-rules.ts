import type { QuotaEntry } from '@gantry/contracts';
import { DomainError, type ErrorDetail } from '../../common/errors';

/** Quota rows as stored (numbers), with the ceilings the tenant admin set. */
export interface StoredQuota {
  gpuModel: string;
  guaranteed: number;
  limit: number;
  maxGuaranteed: number | null;
  maxLimit: number | null;
  /** The monthly GPU-hour budget (null: none) and what happens once it is spent. */
  gpuHourBudget: number | null;
  budgetPolicy: string;
}

/** How strict a budget policy is once the budget is spent: `block` admits nothing, `preemptible-only` some work. */
const POLICY_STRICTNESS: Record<string, number> = { 'preemptible-only': 0, block: 1 };

const EPS = 1e-9;
const r3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * Rules of one team's quota set, each named in the 400 it causes:
 * `non_negative`, `limit_at_least_guaranteed`, `one_row_per_flavour`, `three_decimals`.
 */
export function checkQuotaShape(entries: QuotaEntry[]): void {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  entries.forEach((q, i) => {
    for (const f of ['guaranteed', 'limit', 'gpuHourBudget'] as const) {
      const v = q[f];
      if (typeof v === 'number' && v < 0) details.push({ field: `quotas.${i}.${f}`, problem: `rule non_negative: ${f} must be >= 0 (got ${v})` });
      if (typeof v === 'number' && Math.abs(v * 1000 - Math.round(v * 1000)) > 1e-6) {
        details.push({ field: `quotas.${i}.${f}`, problem: `rule three_decimals: ${f} has more than 3 decimal places` });
      }
    }
    if (q.limit + EPS < q.guaranteed) {
      details.push({
        field: `quotas.${i}.limit`,
        problem: `rule limit_at_least_guaranteed: limit ${q.limit} is below guaranteed ${q.guaranteed} for ${q.gpuModel}`,
      });
    }
    if (seen.has(q.gpuModel)) details.push({ field: `quotas.${i}.gpuModel`, problem: `rule one_row_per_flavour: ${q.gpuModel} appears twice` });
    seen.add(q.gpuModel);
  });
  if (details.length) throw new DomainError('validation_failed', details[0]!.problem, details);
}

/**
 * A team admin may change its own team's quotas only within the ceilings the tenant admin set:
 * no new flavour, no removed flavour, guaranteed and limit at most the ceilings (rule `team_admin_ceiling`),
 * and the GPU-hour budget only tightened: never removed or raised, its policy never loosened
 * from `block` to `preemptible-only` (rule `team_admin_budget`). An entry without
 * `gpuHourBudget` keeps the stored budget (see `keepBudgetWhenOmitted`).
 */
export function checkTeamAdminCeiling(entries: QuotaEntry[], current: StoredQuota[]): void {
  const byModel = new Map(current.map((c) => [c.gpuModel, c]));
  for (const [i, q] of entries.entries()) {
    const c = byModel.get(q.gpuModel);
    if (!c) {
      throw new DomainError('forbidden', `rule team_admin_ceiling: a team admin cannot add a quota for ${q.gpuModel}; ask the tenant admin`, [
        { field: `quotas.${i}.gpuModel`, problem: 'no quota set by the tenant admin' },
      ]);
    }
    const maxG = c.maxGuaranteed ?? c.guaranteed;
    const maxL = c.maxLimit ?? c.limit;
    if (q.guaranteed > maxG + EPS || q.limit > maxL + EPS) {
      throw new DomainError(
        'forbidden',
        `rule team_admin_ceiling: a team admin cannot raise ${q.gpuModel} above what the tenant admin set (guaranteed ${r3(maxG)}, limit ${r3(maxL)})`,
        [{ field: `quotas.${i}`, problem: `above the tenant admin's ceiling (guaranteed ${r3(maxG)}, limit ${r3(maxL)})` }],
      );
    }
    checkTeamAdminBudget(i, q, c);
  }
  const kept = new Set(entries.map((e) => e.gpuModel));
  const removed = current.filter((c) => !kept.has(c.gpuModel));
  if (removed.length) {
    throw new DomainError('forbidden', `rule team_admin_ceiling: a team admin cannot remove the quota for ${removed.map((r) => r.gpuModel).join(', ')}`, [
      { field: 'quotas', problem: 'rows set by the tenant admin are missing' },
    ]);
  }
}

function checkTeamAdminBudget(i: number, q: QuotaEntry, c: StoredQuota): void {
  const budget = q.gpuHourBudget === undefined ? c.gpuHourBudget : q.gpuHourBudget;
  if (c.gpuHourBudget !== null && (budget === null || budget > c.gpuHourBudget + EPS)) {
    throw new DomainError(
      'forbidden',
      `rule team_admin_budget: a team admin cannot ${budget === null ? 'remove' : 'raise'} the GPU-hour budget of ${q.gpuModel} (${r3(c.gpuHourBudget)} per month, set by the tenant admin)`,
      [{ field: `quotas.${i}.gpuHourBudget`, problem: `above the tenant admin's budget ${r3(c.gpuHourBudget)}` }],
    );
  }
  if ((POLICY_STRICTNESS[q.budgetPolicy] ?? 0) < (POLICY_STRICTNESS[c.budgetPolicy] ?? 0)) {
    throw new DomainError(
      'forbidden',
      `rule team_admin_budget: a team admin cannot loosen the budget policy of ${q.gpuModel} from ${c.budgetPolicy} to ${q.budgetPolicy}`,
      [{ field: `quotas.${i}.budgetPolicy`, problem: `looser than the tenant admin's ${c.budgetPolicy}` }],
    );
  }
}

/**
 * The tenant total (set by the platform admin) bounds the teams: the guaranteed GPUs of all
 * teams add up to at most the total (rule `tenant_total_guaranteed`), and no team's limit passes it
 * (rule `tenant_total_limit`). 409: the request is well formed but conflicts with the tenant's state.
 */
export function checkTenantTotal(gpuTotal: number | null, teamId: string, entries: QuotaEntry[], otherTeams: { teamId: string; guaranteed: number }[]): void {
  if (gpuTotal === null) return;
  const mine = entries.reduce((s, q) => s + q.guaranteed, 0);
  const others = otherTeams.filter((t) => t.teamId !== teamId).reduce((s, t) => s + t.guaranteed, 0);
  if (mine + others > gpuTotal + EPS) {
    throw new DomainError(
      'quota_exceeded',
      `rule tenant_total_guaranteed: teams' guaranteed GPUs would add up to ${r3(mine + others)} but the tenant total is ${r3(gpuTotal)} (other teams hold ${r3(others)})`,
      [{ field: 'quotas', problem: `guaranteed sum ${r3(mine + others)} > tenant total ${r3(gpuTotal)}` }],
    );
  }
  for (const [i, q] of entries.entries()) {
    if (q.limit > gpuTotal + EPS) {
      throw new DomainError('quota_exceeded', `rule tenant_total_limit: limit ${r3(q.limit)} for ${q.gpuModel} is above the tenant total ${r3(gpuTotal)}`, [
        { field: `quotas.${i}.limit`, problem: `above the tenant total ${r3(gpuTotal)}` },
      ]);
    }
  }
}

/** The tenant total cannot go below what the teams are already guaranteed (rule `tenant_total_below_guaranteed`). */
export function checkNewTenantTotal(gpuTotal: number | null, guaranteedSum: number): void {
  if (gpuTotal === null) return;
  if (gpuTotal < 0)
    throw new DomainError('validation_failed', `rule non_negative: gpuTotal must be >= 0 (got ${gpuTotal})`, [{ field: 'gpuTotal', problem: 'must be >= 0' }]);
  if (gpuTotal + EPS < guaranteedSum) {
    throw new DomainError(
      'quota_exceeded',
      `rule tenant_total_below_guaranteed: the teams are guaranteed ${r3(guaranteedSum)} GPUs, more than the new total ${r3(gpuTotal)}; lower their quotas first`,
      [{ field: 'gpuTotal', problem: `below the teams' guaranteed sum ${r3(guaranteedSum)}` }],
    );
  }
}
