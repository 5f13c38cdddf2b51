import { z } from 'zod';
import { ZRole, ZScope } from './tenancy';

export const ZApiKeyCreate = z
  .object({
    name: z.string().trim().min(1).max(100),
    /** Bind the key to one team (default: the caller's team, if any). */
    teamId: z.string().min(1).max(64).optional(),
    /** Bind the key to a tenant (platform admins; others default to their own tenant). */
    tenantId: z.string().min(1).max(64).optional(),
    role: ZRole.exclude(['platform-admin']).optional(),
    scopes: z.array(ZScope).min(1).max(20),
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type ApiKeyCreate = z.input<typeof ZApiKeyCreate>;

export const ZApiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  role: ZRole,
  scopes: z.array(z.string()),
  tenantId: z.string().nullable(),
  teamId: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  /** Whether the caller may revoke this key (its own, or one it administers and not stronger than itself). */
  canRevoke: z.boolean(),
});
export type ApiKey = z.infer<typeof ZApiKey>;

/** Answer of POST /v1/api-keys: `key` is the full secret, shown this once. */
export const ZApiKeyCreated = z.object({ id: z.string(), prefix: z.string(), key: z.string() });
export type ApiKeyCreated = z.infer<typeof ZApiKeyCreated>;
