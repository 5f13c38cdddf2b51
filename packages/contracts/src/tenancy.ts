import { z } from 'zod';
import { ZSlug } from './common';

export const ROLES = ['platform-admin', 'tenant-admin', 'team-admin', 'member', 'viewer'] as const;
export const ZRole = z.enum(ROLES);
export type Role = z.infer<typeof ZRole>;

export const SCOPES = [
  'jobs:read',
  'jobs:write',
  'endpoints:read',
  'endpoints:write',
  'quotas:read',
  'quotas:write',
  'cluster:read',
  'cluster:admin',
  'tenants:admin',
] as const;
export const ZScope = z.enum(SCOPES);
export type Scope = z.infer<typeof ZScope>;

/** The scopes each role may hold: a console session carries them all, an API key at most these. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  viewer: ['jobs:read', 'endpoints:read', 'quotas:read', 'cluster:read'],
  member: ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'cluster:read'],
  'team-admin': ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'quotas:write', 'cluster:read'],
  'tenant-admin': ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'quotas:write', 'cluster:read'],
  'platform-admin': [
    'jobs:read',
    'jobs:write',
    'endpoints:read',
    'endpoints:write',
    'quotas:read',
    'quotas:write',
    'cluster:read',
    'cluster:admin',
    'tenants:admin',
  ],
};

/** Rank of a role: a caller never creates a key or a user stronger than itself. */
export const ROLE_RANK: Record<Role, number> = { viewer: 0, member: 1, 'team-admin': 2, 'tenant-admin': 3, 'platform-admin': 4 };

export const ZTenantCreate = z
  .object({
    name: z.string().trim().min(1).max(120),
    slug: ZSlug,
    /**
     * GPUs the tenant may hold in all (the bound on its teams' quotas). Capacity is granted, never
     * open by default: omitted, a new tenant gets 0 until the platform admin grants some; null
     * means no bound.
     */
    gpuTotal: z.number().finite().min(0).max(100_000).nullable().optional(),
  })
  .strict();
export type TenantCreate = z.infer<typeof ZTenantCreate>;
export const ZTenant = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  /** GPUs the tenant may hold in all; null: unbounded. */
  gpuTotal: z.number().nullable(),
  createdAt: z.string(),
});
export type Tenant = z.infer<typeof ZTenant>;

export const ZTeamCreate = z.object({ name: z.string().trim().min(1).max(120), slug: ZSlug }).strict();
export type TeamCreate = z.infer<typeof ZTeamCreate>;
export const ZTeam = z.object({
  id: z.string(),
  tenantId: z.string(),
  name: z.string(),
  slug: z.string(),
  createdAt: z.string(),
});
export type Team = z.infer<typeof ZTeam>;

/** Who is calling: returned by GET /v1/me. */
export const ZMe = z.object({
  kind: z.enum(['api-key', 'session']),
  name: z.string(),
  role: ZRole,
  scopes: z.array(z.string()),
  tenantId: z.string().nullable(),
  teamId: z.string().nullable(),
  teams: z.array(ZTeam),
  /** Set for a console session (and for keys that belong to a user). */
  userId: z.string().nullable().optional(),
  email: z.string().optional(),
});
export type Me = z.infer<typeof ZMe>;
