import type { Role } from '@gantry/contracts';
import { DomainError } from './errors';
import type { Principal } from './principal';

/** Throws 403 unless the caller holds one of the roles (platform admins always pass). */
export function requireRole(p: Principal, ...roles: Role[]): void {
  if (p.role === 'platform-admin' || roles.includes(p.role)) return;
  throw new DomainError('forbidden', `this action needs the role ${roles.join(' or ')}`);
}
