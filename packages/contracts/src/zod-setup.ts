import { z } from 'zod';

/**
 * In a browser, zod never compiles parsers with `new Function`. The console runs under a
 * Content-Security-Policy without 'unsafe-eval' (apps/console/next.config.ts): zod would fall
 * back by itself, but its probe for eval (at the first z.object) is reported as a CSP violation
 * on every page. Servers keep zod's faster compiled parsers. Imported first by index.ts, before
 * any schema is built (zod reads the setting when it builds an object schema).
 */
const g = globalThis as { window?: unknown; document?: unknown };
if (g.window !== undefined && g.document !== undefined) z.config({ jitless: true });
