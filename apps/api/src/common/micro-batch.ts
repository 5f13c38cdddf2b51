/**
 * Collects items for a short window and hands them over together: the first item opens the
 * window, which closes after `windowMs` or at `maxItems`, whichever comes first. One flush
 * runs at a time per batcher; items that arrive during a flush wait for the next window.
 */
export class MicroBatch<T> {
  private items: T[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly windowMs: number,
    private readonly maxItems: number,
  ) {}

  add(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.maxItems) this.close();
    else this.timer ??= setTimeout(() => this.close(), this.windowMs);
  }

  /** Flushes what is collected and waits for every flush started so far (shutdown, tests). */
  drain(): Promise<void> {
    this.close();
    return this.flushing;
  }

  private close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.items.length) return;
    const batch = this.items;
    this.items = [];
    // flush() reports its own failures; a rejection here would only be unhandled
    this.flushing = this.flushing.then(() => this.flush(batch)).catch(() => undefined);
  }
}
