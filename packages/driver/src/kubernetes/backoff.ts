/**
 * Exponential backoff with jitter, for reconnecting watches and retrying calls while the API
 * server is away: the delay doubles from `initialMs` up to `maxMs`, and each wait is drawn from
 * the upper half of that window, so that many clients reconnecting after one API server restart
 * do not arrive together.
 */

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** A number in [0, 1); default Math.random. */
  random?: () => number;
}

export class Backoff {
  private failures = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** The wait before the next attempt, after one more failure. */
  next(): number {
    const { initialMs, maxMs, random = Math.random } = this.options;
    const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return ceiling / 2 + random() * (ceiling / 2);
  }

  /** After a success: the next failure waits `initialMs` again. */
  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; the timer never holds the process open. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
