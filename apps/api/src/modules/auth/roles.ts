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

export const roleToApi = (r: DbRole): Role => TO_API[r];
