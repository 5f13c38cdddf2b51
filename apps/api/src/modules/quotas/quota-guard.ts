import type { Tx } from '@gantry/db';
import { type AnyTx, execute } from '../../common/any-tx';
import type { NewAllocation } from '../allocations/gpu-slots';

/** The quota rows a commit must respect: the team's limits and the tenant total. */
export interface QuotaGuard {
  limits: { gpuModel: string; limit: number }[];
  tenantTotal: number | null;
}

/**
 * The quota advisory locks of the text array parameter `$<param>` (`quota-team:<id>`,
 * `quota-tenant:<id>`) taken in the order given, as a query of one row (OFFSET 0 keeps the
 * ordered subquery as it is; the count is produced only after the last lock is held). Callers
 * list teams before tenants, so that concurrent commits never wait on each other in a circle.
 */
export function quotaLocksQuery(param: number): string {
  return `SELECT count(pg_advisory_xact_lock(hashtext(s.k))) AS held FROM (
       SELECT v.k FROM unnest($${param}::text[]) WITH ORDINALITY AS v(k, o) ORDER BY v.o OFFSET 0) AS s`;
}

/** Takes the quota advisory locks `keys` in the order given, in one round trip (quotaLocksQuery). */
export async function lockQuotas(tx: AnyTx, keys: readonly string[]): Promise<void> {
  if (!keys.length) return;
  await execute(tx, quotaLocksQuery(1), [keys]);
}

/**
 * The admission decision re-checked inside the commit's transaction, under advisory locks on the
 * team (and the tenant when it has a total): however many commits race, the team never passes
 * its limit and the tenant never passes its total. Locks are taken first, team then tenant.
 * `limits` are the rows covering the work (quota-coverage); none: no quota covers it, refused.
 */
export async function withinQuota(tx: Tx, job: { tenantId: string; teamId: string }, allocs: NewAllocation[], guard: QuotaGuard): Promise<boolean> {
  if (!guard.limits.length) return false;
  await lockQuotas(tx, ['quota-team:' + job.teamId, ...(guard.tenantTotal !== null ? ['quota-tenant:' + job.tenantId] : [])]);
  // (read after the locks: a statement's snapshot is taken when it starts)
  const held = await tx.$queryRaw<{ gpuModel: string; units: number }[]>`
    SELECT "gpuModel", sum("gpuUnits")::float8 AS units FROM "Allocation" WHERE "teamId" = ${job.teamId} AND "endedAt" IS NULL GROUP BY "gpuModel"`;
  const heldBy = new Map(held.map((h) => [h.gpuModel, Number(h.units)]));
  const adding = new Map<string, number>();
  for (const a of allocs) adding.set(a.gpuModel, (adding.get(a.gpuModel) ?? 0) + a.gpuUnits);
  const sum = (m: Map<string, number>, model: string) => (model === '*' ? [...m.values()].reduce((s, n) => s + n, 0) : (m.get(model) ?? 0));
  for (const l of guard.limits) {
    const add = sum(adding, l.gpuModel);
    if (add > 0 && sum(heldBy, l.gpuModel) + add > l.limit + 1e-6) return false;
  }
  if (guard.tenantTotal !== null) {
    const [t] = await tx.$queryRaw<{ units: number | null }[]>`
      SELECT sum("gpuUnits")::float8 AS units FROM "Allocation" WHERE "tenantId" = ${job.tenantId} AND "endedAt" IS NULL`;
    if (Number(t?.units ?? 0) + sum(adding, '*') > guard.tenantTotal + 1e-6) return false;
  }
  return true;
}
