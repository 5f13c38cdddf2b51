import { z } from 'zod';

/** One audited change: who (key or session), from where, what. */
export const ZAuditEntry = z.object({
  id: z.string(),
  tenantId: z.string().nullable(),
  actor: z.string(),
  apiKeyId: z.string().nullable(),
  userId: z.string().nullable(),
  source: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});
export type AuditEntry = z.infer<typeof ZAuditEntry>;

export const ZAuditQuery = z
  .object({
    action: z.string().max(100).optional(),
    actor: z.string().max(200).optional(),
  })
  .strict();
