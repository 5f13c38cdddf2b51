import { z } from 'zod';
import { ZSlug } from './common';
import { ZRole } from './tenancy';

export const ZEmail = z.string().trim().toLowerCase().max(254).email('must be an email address');

/**
 * Password rules (NIST 800-63B): at least 12 characters, not one repeated character,
 * not a well-known password. Checked on the server as well (400 naming the rule).
 */
export const ZPassword = z.string().min(12, 'must be at least 12 characters').max(256, 'must be at most 256 characters');

/**
 * Sign-in. An e-mail is unique per tenant: when the address and password match accounts in
 * several tenants, the answer is a 400 asking for `tenant` (the tenant's slug), which picks one.
 */
export const ZLogin = z
  .object({
    email: ZEmail,
    password: z.string().min(1).max(256),
    tenant: ZSlug.optional(),
  })
  .strict();
export type Login = z.infer<typeof ZLogin>;

export const ZUserCreate = z
  .object({
    email: ZEmail,
    name: z.string().trim().min(1).max(120),
    password: z.string().min(1).max(256),
    role: ZRole.exclude(['platform-admin']),
    /** Bind to a team (team-admin, member, viewer); default: the caller's team. */
    teamId: z.string().min(1).max(64).optional(),
    /** Platform admins name the tenant; others default to their own. */
    tenantId: z.string().min(1).max(64).optional(),
  })
  .strict();
export type UserCreate = z.infer<typeof ZUserCreate>;

export const ZUser = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: ZRole,
  tenantId: z.string().nullable(),
  teamId: z.string().nullable(),
  createdAt: z.string(),
});
export type User = z.infer<typeof ZUser>;

/** Answer of POST /v1/auth/login: the session cookie is set; `csrfToken` goes in `X-CSRF-Token` on changes. */
export const ZLoginResult = z.object({ user: ZUser, csrfToken: z.string(), expiresAt: z.string() });
export type LoginResult = z.infer<typeof ZLoginResult>;
/** A console session made from an API key: the cookie replaces the key in the browser. */
export const ZKeySessionResult = z.object({ csrfToken: z.string(), expiresAt: z.string() });
export type KeySessionResult = z.infer<typeof ZKeySessionResult>;
