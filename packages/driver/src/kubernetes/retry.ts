/**
 * Retries for API calls: transient failures (the API server restarting, unreachable, or
 * answering 5xx) are retried with backoff for a bounded time; write conflicts (409 on a
 * resourceVersion precondition) are retried with a fresh read by the caller's own function.
 */
import { Backoff, sleep } from './backoff';

export function httpStatusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number') return code;
  const statusCode = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof statusCode === 'number' ? statusCode : undefined;
}

/** Connection refused/reset, timeouts, and 5xx answers of an API server that is (re)starting. */
export function isTransient(err: unknown): boolean {
  const status = httpStatusOf(err);
  if (status !== undefined) return status === 500 || status === 502 || status === 503 || status === 504;
  const code = (err as { code?: unknown } | null)?.code;
  const name = (err as { name?: unknown } | null)?.name;
  return (
    name === 'FetchError' ||
    name === 'AbortError' ||
    (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|UND_ERR_.*)$/.test(code))
  );
}

/**
 * An API server that has just (re)started answers 401/403 for a few seconds while its token and
 * RBAC caches fill, to requests that are allowed. Such an answer is retried only within this long
 * after this process last saw the server unreachable or failing (a real refusal is not).
 */
export const AUTH_WARMUP_MS = 30_000;
let lastOutageAt = Number.NEGATIVE_INFINITY;

/** Records that the API server was just unreachable or failing (informers call it on a failed list or watch). */
export function noteApiFailure(err: unknown): void {
  if (isTransient(err)) lastOutageAt = Date.now();
}

function isAuthWarmup(err: unknown, now: number): boolean {
  const status = httpStatusOf(err);
  return (status === 401 || status === 403) && now - lastOutageAt < AUTH_WARMUP_MS;
}

export interface TransientRetryOptions {
  /** Give up after this long (the last error is thrown). */
  timeoutMs: number;
  initialMs?: number;
  maxMs?: number;
  isClosed?: () => boolean;
}

/** Runs `call`, retrying transient failures with backoff until `timeoutMs` has passed. */
export async function withTransientRetry<T>(call: () => Promise<T>, options: TransientRetryOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const backoff = new Backoff({ initialMs: options.initialMs ?? 100, maxMs: options.maxMs ?? 2000 });
  for (;;) {
    try {
      return await call();
    } catch (err) {
      const now = Date.now();
      if (isTransient(err)) noteApiFailure(err);
      else if (!isAuthWarmup(err, now)) throw err;
      if (options.isClosed?.() || now >= deadline) throw err;
      await sleep(Math.min(backoff.next(), Math.max(0, deadline - Date.now())));
    }
  }
}

/**
 * Read-modify-write with optimistic concurrency: `attempt` reads the object, computes the change
 * and writes it with the resourceVersion it read; on 409 Conflict it runs again on a fresh read.
 */
export async function retryOnConflict<T>(what: string, attempt: () => Promise<T>, maxAttempts = 10): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (httpStatusOf(err) !== 409 || i >= maxAttempts) {
        if (httpStatusOf(err) === 409) throw new Error(`${what}: still conflicting after ${maxAttempts} attempts`, { cause: err });
        throw err;
      }
      await sleep(Math.random() * 20 * i);
    }
  }
}
