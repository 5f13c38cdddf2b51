import { z } from 'zod';

/** One field an audited change moved: its value before and after (null when it did not exist before or no longer does). */
export const ZAuditFieldChange = z.object({ from: z.unknown(), to: z.unknown() });
export type AuditFieldChange = z.infer<typeof ZAuditFieldChange>;

/** A changed value as a person reads it: numbers and words as they are, lists joined, none as "–". */
function shown(v: unknown): string {
  if (v === null || v === undefined) return '–';
  if (Array.isArray(v)) return v.length ? v.map(shown).join(', ') : '[]';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** One changed field, as the Audit page and the CSV export write it: `limit 8 → 16`. */
export function describeChange(field: string, c: AuditFieldChange): string {
  return `${field} ${shown(c.from)} → ${shown(c.to)}`;
}

/** One audited change: who (key or session), from where, what. */
export const ZAuditEntry = z.object({
  id: z.string(),
  tenantId: z.string().nullable(),
  /** The team the action was about (null for tenant- or cluster-wide actions). */
  teamId: z.string().nullable(),
  actor: z.string(),
  apiKeyId: z.string().nullable(),
  userId: z.string().nullable(),
  source: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  /** What the target is, by name ("job llm-pretrain"), when it still exists and the reader may see it. */
  targetName: z.string().nullable(),
  /** `refused`: the change was refused (403 or 409); data.error says why. */
  outcome: z.enum(['done', 'refused']),
  data: z.record(z.string(), z.unknown()),
  /** The fields the change moved, old and new value each (secrets never); null when it moved none or is not an update. */
  changes: z.record(z.string(), ZAuditFieldChange).nullable(),
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
    /** `refused`: only the changes that were refused (403, 409). */
    outcome: z.enum(['refused']).optional(),
    /** `csv`: every entry that matches (newest first, at most 10,000) as a CSV export. */
    format: z.enum(['json', 'csv']).optional(),
  })
  .strict();
