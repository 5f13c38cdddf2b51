import type { QuotaEntry } from '@gantry/contracts';
import { DomainError } from '../../common/errors';
import { checkNewTenantTotal, checkQuotaShape, checkTeamAdminCeiling, checkTenantTotal, type StoredQuota } from './quota-rules';

const e = (gpuModel: string, guaranteed: number, limit: number): QuotaEntry => ({ gpuModel, guaranteed, limit, budgetPolicy: 'block' });
const stored = (
  gpuModel: string,
  guaranteed: number,
  limit: number,
  max?: [number, number],
  budget: number | null = null,
  budgetPolicy = 'block',
): StoredQuota => ({
  gpuModel,
  guaranteed,
  limit,
  maxGuaranteed: max?.[0] ?? null,
  maxLimit: max?.[1] ?? null,
  gpuHourBudget: budget,
  budgetPolicy,
});
const b = (entry: QuotaEntry, gpuHourBudget: number | null | undefined, budgetPolicy: 'block' | 'preemptible-only' = 'block'): QuotaEntry => ({
  ...entry,
  gpuHourBudget,
  budgetPolicy,
});

function failure(fn: () => void): { code: string; message: string } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return { code: err.code, message: err.message };
  }
}

describe('quota rules', () => {
  it.each([
    { name: 'a valid set', entries: [e('*', 8, 16), e('H100-80GB', 4, 8)], wantRule: null },
    { name: 'a negative guaranteed', entries: [e('*', -1, 16)], wantRule: 'non_negative' },
    { name: 'a negative limit', entries: [e('*', 0, -2)], wantRule: 'non_negative' },
    { name: 'limit below guaranteed', entries: [e('*', 8, 4)], wantRule: 'limit_at_least_guaranteed' },
    { name: 'a flavour twice', entries: [e('*', 1, 2), e('*', 1, 2)], wantRule: 'one_row_per_flavour' },
    { name: 'more than three decimals', entries: [e('*', 0.1234, 2)], wantRule: 'three_decimals' },
  ])('shape: $name', ({ entries, wantRule }) => {
    const f = failure(() => checkQuotaShape(entries));
    if (!wantRule) return expect(f).toBeNull();
    expect(f?.code).toBe('validation_failed');
    expect(f?.message).toContain(`rule ${wantRule}`);
  });

  it.each([
    { name: 'lowering within the ceiling', entries: [e('*', 4, 8)], current: [stored('*', 8, 16)], wantRule: null },
    { name: 'raising back up to the tenant admin ceiling', entries: [e('*', 8, 16)], current: [stored('*', 4, 8, [8, 16])], wantRule: null },
    { name: 'raising the limit above the ceiling', entries: [e('*', 8, 17)], current: [stored('*', 8, 16, [8, 16])], wantRule: 'team_admin_ceiling' },
    { name: 'raising guaranteed above the ceiling', entries: [e('*', 9, 16)], current: [stored('*', 8, 16)], wantRule: 'team_admin_ceiling' },
    { name: 'adding a flavour', entries: [e('*', 8, 16), e('A100-80GB', 1, 1)], current: [stored('*', 8, 16)], wantRule: 'team_admin_ceiling' },
    { name: 'removing a flavour (no row would mean no limit)', entries: [], current: [stored('*', 8, 16)], wantRule: 'team_admin_ceiling' },
    { name: 'keeping the budget by omitting it', entries: [b(e('*', 8, 16), undefined)], current: [stored('*', 8, 16, undefined, 0)], wantRule: null },
    { name: 'lowering the budget', entries: [b(e('*', 8, 16), 50)], current: [stored('*', 8, 16, undefined, 100)], wantRule: null },
    { name: 'setting a budget where there was none', entries: [b(e('*', 8, 16), 50)], current: [stored('*', 8, 16)], wantRule: null },
    {
      name: 'tightening the policy to block',
      entries: [b(e('*', 8, 16), 10, 'block')],
      current: [stored('*', 8, 16, undefined, 10, 'preemptible-only')],
      wantRule: null,
    },
    { name: 'removing the budget', entries: [b(e('*', 8, 16), null)], current: [stored('*', 8, 16, undefined, 0)], wantRule: 'team_admin_budget' },
    { name: 'raising the budget', entries: [b(e('*', 8, 16), 100000)], current: [stored('*', 8, 16, undefined, 0)], wantRule: 'team_admin_budget' },
    {
      name: 'loosening the policy',
      entries: [b(e('*', 8, 16), 0, 'preemptible-only')],
      current: [stored('*', 8, 16, undefined, 0)],
      wantRule: 'team_admin_budget',
    },
  ])('team admin: $name', ({ entries, current, wantRule }) => {
    const f = failure(() => checkTeamAdminCeiling(entries, current));
    if (!wantRule) return expect(f).toBeNull();
    expect(f?.code).toBe('forbidden');
    expect(f?.message).toContain(`rule ${wantRule}`);
  });

  it.each([
    { name: 'no tenant total', total: null, entries: [e('*', 100, 200)], others: [{ teamId: 'o', guaranteed: 50 }], wantRule: null },
    { name: 'within the total', total: 64, entries: [e('*', 32, 64)], others: [{ teamId: 'o', guaranteed: 32 }], wantRule: null },
    {
      name: 'the team itself is replaced, not added',
      total: 64,
      entries: [e('*', 40, 64)],
      others: [
        { teamId: 'me', guaranteed: 60 },
        { teamId: 'o', guaranteed: 24 },
      ],
      wantRule: null,
    },
    {
      name: 'guaranteed sum above the total',
      total: 64,
      entries: [e('*', 40, 64)],
      others: [{ teamId: 'o', guaranteed: 32 }],
      wantRule: 'tenant_total_guaranteed',
    },
    { name: 'a limit above the total', total: 64, entries: [e('*', 8, 65)], others: [], wantRule: 'tenant_total_limit' },
  ])('tenant total: $name', ({ total, entries, others, wantRule }) => {
    const f = failure(() => checkTenantTotal(total, 'me', entries, others));
    if (!wantRule) return expect(f).toBeNull();
    expect(f?.code).toBe('quota_exceeded');
    expect(f?.message).toContain(`rule ${wantRule}`);
  });

  it('refuses a tenant total below what the teams are guaranteed', () => {
    expect(failure(() => checkNewTenantTotal(10, 12))?.message).toContain('rule tenant_total_below_guaranteed');
    expect(failure(() => checkNewTenantTotal(12, 12))).toBeNull();
    expect(failure(() => checkNewTenantTotal(null, 500))).toBeNull();
  });
});
