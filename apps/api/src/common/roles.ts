import type { Role } from '@gantry/contracts';
import { DomainError } from './errors';
import type { Principal } from './principal';

/** Throws 403 unless the caller holds one of the roles (platform admins always pass). */
export function requireRole(p: Principal, ...roles: Role[]): void {
  if (p.role === 'platform-admin' || roles.includes(p.role)) return;
  throw new DomainError('forbidden', `this action needs the role ${roles.join(' or ')}`);
}

/** Prisma enum names <-> API role names. */
const TO_API = {
  platform_admin: 'platform-admin',
  tenant_admin: 'tenant-admin',
  team_admin: 'team-admin',
  member: 'member',
  viewer: 'viewer',
} as const satisfies Record<string, Role>;

export type DbRole = keyof typeof TO_API;

const TO_DB = Object.fromEntries(Object.entries(TO_API).map(([db, api]) => [api, db])) as Record<Role, DbRole>;

export const roleToApi = (r: DbRole): Role => TO_API[r];
export const roleToDb = (r: Role): DbRole => TO_DB[r];
