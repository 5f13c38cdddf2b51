import type { Page } from '@gantry/contracts';

/**
 * Follows `nextCursor` until the list is exhausted (or `maxPages` pages were read,
 * a guard against a cursor that never ends).
 */
export async function listAll<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, maxPages = 50): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return items;
}
