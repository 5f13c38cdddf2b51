import { toStorableString } from '../../common/json-shape';

/** Never written to the audit log. */
const SECRET_FIELDS = new Set(['password', 'key', 'token', 'secret', 'csrfToken']);

const MAX_DEPTH = 6;
const MAX_STRING = 2000;

/**
 * Removes secrets (passwords, keys, tokens) from what is logged, at any depth; what is deeper
 * than MAX_DEPTH is cut (never passed on whole: it could be nested past what the database
 * driver serialises), long strings are shortened and made storable (no NUL, no lone surrogate).
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return storable(value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[truncated]';
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redact(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .slice(0, 100)
      .map(([k, v]) => [storable(k), isSecretField(k) ? '[redacted]' : redact(v, depth + 1)]),
  );
}

export const isSecretField = (k: string) => SECRET_FIELDS.has(k) || /password|secret|token/i.test(k);
const storable = toStorableString;
