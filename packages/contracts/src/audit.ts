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
    /** Entries at or after this instant (ISO 8601). */
    from: z.iso.datetime({ offset: true }).optional(),
    /** Entries before this instant (ISO 8601). */
    to: z.iso.datetime({ offset: true }).optional(),
    /** `csv`: every entry that matches (newest first, at most 10,000) as a CSV export. */
    format: z.enum(['json', 'csv']).optional(),
  })
  .strict();
