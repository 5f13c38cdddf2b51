import { DomainError } from './errors';

/** Deepest nesting a request body may have (objects and arrays). */
export const MAX_JSON_DEPTH = 32;

/** NUL (Postgres text refuses it) or a lone surrogate (Prisma's JSON reader refuses it). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A string Postgres and Prisma can store: well-formed UTF-16 (no lone surrogate) and no NUL. */
export function isStorableString(s: string): boolean {
  UNSTORABLE.lastIndex = 0;
  return !UNSTORABLE.test(s);
}

/** The string with every NUL and lone surrogate replaced by U+FFFD. */
export const toStorableString = (s: string) => s.replace(UNSTORABLE, '\uFFFD');

/**
 * Refuses a parsed JSON body that nests deeper than MAX_JSON_DEPTH or holds a string (value or
 * key) that cannot be stored (NUL, lone surrogate), with a 400 naming the field. Iterative: a
 * body nested thousands of levels deep must not overflow the stack here, nor reach code that
 * recurses (JSON.stringify in the idempotency and audit interceptors, zod).
 */
export function checkJsonShape(body: unknown, root = '(body)'): void {
  const stack: { value: unknown; path: string[] }[] = [{ value: body, path: [] }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    const field = path.join('.') || root;
    if (typeof value === 'string') {
      if (!isStorableString(value)) fail(field, 'must not contain NUL characters or unpaired surrogates');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_JSON_DEPTH) fail(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (!isStorableString(k)) fail(field, 'has a key with NUL characters or unpaired surrogates');
      stack.push({ value: v, path: [...path, k] });
    }
  }
}

function fail(field: string, problem: string): never {
  throw new DomainError('validation_failed', `${field}: ${problem}`, [{ field, problem }]);
}

/** Refuses a path whose decoded segments hold NUL (ids are looked up in Postgres, which refuses NUL). */
export function checkPath(path: string): void {
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      continue; // badly encoded: the router answers 400 for it
    }
    if (!isStorableString(decoded)) fail('(path)', 'must not contain NUL characters');
  }
}
