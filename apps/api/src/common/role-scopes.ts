import type { Role, Scope } from '@gantry/contracts';

/** Scopes a console session carries, from the user's role (API keys carry their own). */
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
