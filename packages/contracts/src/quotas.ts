import { z } from 'zod';

/** A GPU flavour of a quota row: a GPU model or `*` (every model). */
export const ZQuotaFlavour = z
  .string()
  .min(1)
  .max(64)
  .regex(/^(\*|[A-Za-z0-9][A-Za-z0-9.-]*)$/, 'must be a GPU model (e.g. "H100-80GB") or "*"');

export const BUDGET_POLICIES = ['block', 'preemptible-only'] as const;
export const ZBudgetPolicy = z.enum(BUDGET_POLICIES);
export type BudgetPolicy = z.infer<typeof ZBudgetPolicy>;

/** GPUs as a decimal with at most three places (a MIG 1g slice is 1/7 of a GPU). */
const ZGpus = z.number().finite().max(100_000);

/**
 * One quota row of a team (Kueue's nominalQuota + borrowingLimit, KAI's quota + limit):
 * `guaranteed` GPUs are the team's own (never lent away for good: reclaimed from borrowers),
 * `limit` is the ceiling with borrowing.
 */
export const ZQuotaEntry = z
  .object({
    gpuModel: ZQuotaFlavour,
    guaranteed: ZGpus,
    limit: ZGpus,
    /** Optional GPU-hour budget per calendar month (UTC). */
    gpuHourBudget: ZGpus.nullable().optional(),
    /** Once the budget is spent: block new work, or admit only preemptible work. */
    budgetPolicy: ZBudgetPolicy.default('block'),
  })
  .strict();
export type QuotaEntry = z.output<typeof ZQuotaEntry>;

export const ZQuotasPut = z.object({ quotas: z.array(ZQuotaEntry).max(32) }).strict();
export type QuotasPut = z.input<typeof ZQuotasPut>;

export const ZQuota = z.object({
  gpuModel: z.string(),
  guaranteed: z.number(),
  limit: z.number(),
  gpuHourBudget: z.number().nullable(),
  budgetPolicy: ZBudgetPolicy,
  updatedAt: z.string(),
});
export type Quota = z.infer<typeof ZQuota>;

export const ZTeamQuotas = z.object({
  teamId: z.string(),
  tenantId: z.string(),
  /** The tenant-wide GPU total set by the platform admin (null = unlimited). */
  tenantGpuTotal: z.number().nullable(),
  /** Fair-share weight of the team. */
  weight: z.number(),
  quotas: z.array(ZQuota),
});
export type TeamQuotas = z.infer<typeof ZTeamQuotas>;

/** PUT /v1/tenants/:id/quota: the tenant total (platform admin). */
export const ZTenantQuotaPut = z.object({ gpuTotal: ZGpus.nullable() }).strict();
export type TenantQuotaPut = z.infer<typeof ZTenantQuotaPut>;
export const ZTenantQuota = z.object({
  tenantId: z.string(),
  gpuTotal: z.number().nullable(),
  /** Sum of the teams' guaranteed GPUs (every flavour). */
  guaranteedSum: z.number(),
});
export type TenantQuota = z.infer<typeof ZTenantQuota>;

export const ZUsageByFlavour = z.object({
  gpuModel: z.string(),
  /** GPUs held now (MIG slice = compute/7, share = fraction). */
  inUse: z.number(),
  /** Part of `inUse` above `guaranteed` (borrowed from the tenant's pool; preemptible). */
  borrowed: z.number(),
  guaranteed: z.number().nullable(),
  limit: z.number().nullable(),
  /** GPUs of pending jobs of this flavour. */
  pending: z.number(),
});
export const ZTeamUsage = z.object({
  teamId: z.string(),
  period: z.object({ start: z.string(), end: z.string() }),
  /** Per quota flavour (`*` sums every model not covered by its own row). */
  flavours: z.array(ZUsageByFlavour),
  /** GPUs held now per GPU model. */
  byModel: z.array(z.object({ gpuModel: z.string(), inUse: z.number() })),
  gpuHours: z.number(),
  gpuHourBudget: z.number().nullable(),
  budgetPolicy: ZBudgetPolicy.nullable(),
  budgetExhausted: z.boolean(),
});
export type TeamUsage = z.infer<typeof ZTeamUsage>;
