import type { Role, Scope } from '@gantry/contracts';
import { DomainError } from './errors';
import type { TenantScope } from './tenant-scope';

/** Who is calling, resolved from an API key (or, later, a session). */
export interface Principal {
  keyId: string;
  name: string;
  role: Role;
  scopes: readonly Scope[];
  /** null only for platform admins. */
  tenantId: string | null;
  /** Set when the key is bound to one team. */
  teamId: string | null;
  /** How the caller authenticated: an API key (default) or a console session cookie. */
  via?: 'api-key' | 'session';
  /** The user behind a session (or a key made for a user). */
  userId?: string | null;
  email?: string;
  /** Client address, for the audit log. */
  source?: string | null;
  /**
   * Who stands behind the credential: `user:<id>` for a user (sessions and the user's keys), else
   * `key:<id>` of the first key of the chain that made this one. Rate limits, idempotency keys,
   * the cap on live keys and the right to revoke a key go by it, so that minting keys or
   * sessions never buys a fresh budget.
   */
  owner?: string;
  /** The API key behind the credential (for a session made from a key, that key). */
  apiKeyId?: string | null;
  /**
   * performance.now() when the request's authentication began: the lookup caches' change counters
   * read since then are current for this request (ChangeEpoch.current's `notBefore`).
   */
  since?: number;
}

/** The owner of a stored API key row (rows made before owners were recorded: its user, or itself). */
export function keyOwner(row: { id: string; owner: string | null; userId: string | null }): string {
  return row.owner ?? (row.userId ? `user:${row.userId}` : `key:${row.id}`);
}

/** The caller's owner (see Principal.owner). */
export function ownerOf(p: Principal): string {
  return p.owner ?? (p.userId ? `user:${p.userId}` : `key:${p.keyId}`);
}

export function scopeOf(p: Principal): TenantScope {
  if (p.role === 'platform-admin' && p.tenantId === null) return { kind: 'platform' };
  if (!p.tenantId) throw new DomainError('forbidden', 'this key is not bound to a tenant');
  return { kind: 'tenant', tenantId: p.tenantId, teamId: p.teamId };
}

export function hasScope(p: Principal, scope: Scope): boolean {
  return p.role === 'platform-admin' || p.scopes.includes(scope);
}
