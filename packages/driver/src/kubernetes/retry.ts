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
      if (!isTransient(err) || options.isClosed?.() || Date.now() >= deadline) throw err;
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
