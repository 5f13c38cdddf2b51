import type { NextFunction, Request, Response } from 'express';

/** The JSON API: nothing in an answer may load, run or be framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Swagger UI at /docs: its page loads its own scripts (no inline or eval'd code), its own
 * stylesheet plus inline <style> blocks and style attributes, its own favicons and data: icons,
 * and calls this API ("Try it out"). Nothing from another origin; never framed.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const HSTS = 'max-age=31536000; includeSubDomains';

/** The headers of an answer for `path` (also for answers written before Express, see http.ts). */
export function securityHeaders(path: string, opts: { hsts: boolean }): Record<string, string> {
  return {
    'Content-Security-Policy': path === '/docs' || path.startsWith('/docs/') ? DOCS_CSP : API_CSP,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    ...(opts.hsts ? { 'Strict-Transport-Security': HSTS } : {}),
  };
}

/** Express middleware: the security headers on every answer, set before anything else can answer. */
export function securityHeadersMiddleware(opts: { hsts: boolean }) {
  return (req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of Object.entries(securityHeaders(req.path, opts))) res.setHeader(name, value);
    next();
  };
}
