/** Waiting and percentiles, shared by the benchmarks that drive a running system. */

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The p-th percentile (nearest rank) of an ascending array; -1 when it is empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return -1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Polls `fn` every `every` ms until it returns something truthy (returned) or `ms` pass (throws).
 * `retryErrors`: a throwing `fn` counts as "not yet" (a database or Redis restarting under a crash test).
 */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, ms: number, every = 200, retryErrors = false): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = retryErrors ? await fn().catch(() => undefined) : await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`not met within ${ms} ms`);
    await sleep(every);
  }
}

/** Waits until the cluster's GPUs are registered in the database; resolves with their count. */
export function gpusRegistered(db: { gpu: { count(): Promise<number> } }, atLeast: number, ms = 120_000, retryErrors = false): Promise<number> {
  return until(
    async () => {
      const n = await db.gpu.count();
      return n >= atLeast ? n : undefined;
    },
    ms,
    200,
    retryErrors,
  );
}
