/**
 * Runs `fn` over every item with at most `concurrency` calls in flight; the answers in the order
 * of the items. The batch calls of a driver without its own (startMany, statusMany, logsMany)
 * are built on it.
 */
export async function mapBounded<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
  return out;
}
