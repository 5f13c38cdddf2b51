import type { Role } from '@gantry/contracts';

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
