/** Polls a check until it reports done, failed, a timeout, or the driver closing. */

export type PollOutcome<T> = { done: T } | { failed: string } | 'waiting';

export interface PollOptions {
  intervalMs: number;
  timeoutMs: number;
  /** What is awaited, for error messages ("MIG config gantry-1a2b on node n1"). */
  what: string;
  isClosed(): boolean;
}

export async function pollUntil<T>(check: () => Promise<PollOutcome<T>>, options: PollOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (options.isClosed()) throw new Error(`driver closed while waiting for ${options.what}`);
    const outcome = await check();
    if (outcome !== 'waiting') {
      if ('failed' in outcome) throw new Error(`${options.what} failed: ${outcome.failed}`);
      return outcome.done;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${options.timeoutMs / 1000} s waiting for ${options.what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs).unref());
  }
}
