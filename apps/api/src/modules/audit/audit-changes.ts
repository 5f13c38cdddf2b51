import type { AuditFieldChange } from '@gantry/contracts';
import { isSecretField, redact } from './redact';
import type { Snapshot } from './audit-subjects.repository';

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The fields a change moved, between the subject as it was and as it is: `{ field: { from, to } }`
 * for each field whose value differs (null when it did not exist before, or no longer does).
 * Secret fields are never included; values are redacted and shortened as the request is.
 * Null when nothing moved.
 */
export function changesBetween(before: Snapshot | null, after: Snapshot | null): Record<string, AuditFieldChange> | null {
  if (!before && !after) return null;
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].filter((f) => !isSecretField(f));
  const moved = fields
    .filter((f) => !same(before?.[f], after?.[f]))
    .map((f) => [f, { from: redact(before?.[f] ?? null), to: redact(after?.[f] ?? null) }] as const);
  return moved.length ? Object.fromEntries(moved) : null;
}
