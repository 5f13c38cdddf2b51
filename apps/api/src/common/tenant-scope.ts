import { Prisma } from '@gantry/db';
import { DomainError } from './errors';

/**
 * Whose data a repository call may read or change. A platform admin (and the worker, which acts
 * for the whole cluster: SYSTEM_SCOPE) sees every tenant; everyone else is confined to one
 * tenant, and a team-bound caller to one team.
 *
 * Every method of a repository that holds tenant data takes a scope as its first argument, and
 * builds its filter here: reads and writes alike (an update or delete carries the filter in its
 * own `where`, it never goes by a raw id found by an earlier read). `tenant-scope.spec.ts` holds
 * the rule; `tenant-scope.int.spec.ts` tries every such method as tenant B on tenant A's rows.
 */
export type TenantScope = { kind: 'platform' } | { kind: 'tenant'; tenantId: string; teamId: string | null };
export type TenantBoundScope = Extract<TenantScope, { kind: 'tenant' }>;

/** The worker's scope: placement, failover and telemetry act on every tenant's rows. */
export const SYSTEM_SCOPE: TenantScope = Object.freeze({ kind: 'platform' });

/**
 * The shapes of tenant data:
 * - `team-rows`: rows with tenantId and teamId columns (jobs, endpoints, allocations, keys, users, schedules);
 * - `tenant-rows`: rows with a tenantId column only (events, audit, cold starts, replicas);
 * - `tenant`: the Tenant table itself; `team`: the Team table; `quota`: rows reached through their team.
 */
export type ScopedShape = 'team-rows' | 'tenant-rows' | 'tenant' | 'team' | 'quota';

type Where<S extends ScopedShape> = S extends 'team-rows'
  ? { tenantId?: string; teamId?: string }
  : S extends 'tenant-rows'
    ? { tenantId?: string }
    : S extends 'tenant'
      ? { id?: string }
      : S extends 'team'
        ? { tenantId?: string; id?: string }
        : { team?: { tenantId: string; id?: string } };

/** The one tenancy filter: a Prisma `where` fragment for rows of `shape` the scope may touch. */
export function scopeWhere<S extends ScopedShape>(scope: TenantScope, shape: S): Where<S> {
  if (scope.kind === 'platform') return {} as Where<S>;
  const { tenantId, teamId } = scope;
  const team = teamId ? { id: teamId } : {};
  switch (shape) {
    case 'team-rows':
      return (teamId ? { tenantId, teamId } : { tenantId }) as Where<S>;
    case 'tenant-rows':
      return { tenantId } as Where<S>;
    case 'tenant':
      return { id: tenantId } as Where<S>;
    case 'team':
      return { tenantId, ...team } as Where<S>;
    case 'quota':
      return { team: { tenantId, ...team } } as Where<S>;
    default: {
      const never: never = shape;
      throw new Error(`unknown scope shape ${String(never)}`);
    }
  }
}

/**
 * The same filter as typed-SQL parameters for team rows: the tenant (null for the platform) and
 * the team (null unless the caller is bound to one). Use as `($n::text IS NULL OR "tenantId" = $n)`.
 */
export function scopeValues(scope: TenantScope): { tenantId: string | null; teamId: string | null } {
  const w = scopeWhere(scope, 'team-rows');
  return { tenantId: w.tenantId ?? null, teamId: w.teamId ?? null };
}

/** The same filter as SQL conditions on "tenantId"/"teamId" (raw queries over team rows); empty for the platform. */
export function scopeSql(scope: TenantScope): Prisma.Sql[] {
  const w = scopeWhere(scope, 'team-rows');
  const out: Prisma.Sql[] = [];
  if (w.tenantId !== undefined) out.push(Prisma.sql`"tenantId" = ${w.tenantId}`);
  if (w.teamId !== undefined) out.push(Prisma.sql`"teamId" = ${w.teamId}`);
  return out;
}

/** Refuses (403) to create a row outside the scope: the repositories' guard on creates. */
export function assertCovers(scope: TenantScope, row: { tenantId: string | null; teamId?: string | null }, what: string): void {
  if (!covers(scope, row)) throw new DomainError('forbidden', `${what} is outside the caller's tenant or team`);
}

/** Whether a row to be written (tenantId, and teamId when it has one) lies inside the scope: the check for creates. */
export function covers(scope: TenantScope, row: { tenantId: string | null; teamId?: string | null }): boolean {
  if (scope.kind === 'platform') return true;
  if (row.tenantId !== scope.tenantId) return false;
  return !scope.teamId || row.teamId === undefined || row.teamId === scope.teamId;
}
