import { createGantryClient, GantryApiError, type GantryClient } from '@gantry/sdk';
import { humanizeMessage } from './messages';

export { GantryApiError };
export type { GantryClient };

/**
 * Stored in place of an API key after an email + password sign-in: the browser then holds an
 * httpOnly session cookie, and changes carry the CSRF token from the `gantry_csrf` cookie.
 */
export const SESSION_MARKER = 'session';

function csrfFromCookie(): string | undefined {
  if (typeof document === 'undefined') return undefined;
  const m = /(?:^|;\s*)gantry_csrf=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** The console reaches the API same-origin: Next rewrites /v1/* to GANTRY_API_URL. */
export function makeClient(apiKey: string): GantryClient {
  if (apiKey === SESSION_MARKER) return createGantryClient({ baseUrl: '', csrfToken: csrfFromCookie });
  return createGantryClient({ baseUrl: '', apiKey });
}

export function isApiError(err: unknown): err is GantryApiError {
  return err instanceof GantryApiError || (typeof err === 'object' && err !== null && (err as { name?: string }).name === 'GantryApiError');
}

export const isUnauthorized = (err: unknown) => isApiError(err) && err.status === 401;

/** A short human sentence for any error thrown by the SDK or fetch. */
export function describeError(err: unknown): string {
  if (isApiError(err)) {
    if (err.status === 502 || err.status === 503 || err.status === 504 || (err.status >= 500 && err.code === 'http_error')) {
      // no error envelope: the console's proxy could not reach the API, or the API crashed
      return `The Gantry API is not reachable or failed (HTTP ${err.status}).`;
    }
    return humanizeMessage(err.message);
  }
  if (err instanceof TypeError) return 'Network error: the Gantry API could not be reached.';
  if (err instanceof Error) return err.message;
  return String(err);
}
