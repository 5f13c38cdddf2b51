/** Minimal cookie handling (no dependency): parse a Cookie header, build Set-Cookie values. */
export const SESSION_COOKIE = 'gantry_session';
export const CSRF_COOKIE = 'gantry_csrf';
export const CSRF_HEADER = 'x-csrf-token';

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    if (!name || name in out) continue;
    try {
      out[name] = decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      out[name] = part.slice(i + 1).trim();
    }
  }
  return out;
}

export function setCookie(
  name: string,
  value: string,
  opts: { httpOnly: boolean; secure: boolean; maxAgeSeconds: number; sameSite: 'Strict' | 'Lax' },
): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(opts.maxAgeSeconds))}`,
    `SameSite=${opts.sameSite}`,
    ...(opts.httpOnly ? ['HttpOnly'] : []),
    ...(opts.secure ? ['Secure'] : []),
  ].join('; ');
}
