/**
 * Bounds how many API requests are in flight at once: registering a thousand nodes or starting a
 * hundred pods a second goes out as a steady stream over the pooled connections instead of a
 * burst that the API server answers with 429s or that times out.
 */
export class WorkQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly concurrency: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Runs `task` for every item, at most `concurrency` at a time; rejects with the first error after all settle. */
  async all<I, T>(items: readonly I[], task: (item: I) => Promise<T>): Promise<T[]> {
    const results = await Promise.allSettled(items.map((item) => this.run(() => task(item))));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return results.map((r) => (r as PromiseFulfilledResult<T>).value);
  }

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
