import type { Page, PageQuery } from '@gantry/contracts';

/** Prisma arguments for a keyset page over `id` (cuid ids sort by creation). */
export function pageArgs(q: PageQuery, order: 'asc' | 'desc' = 'asc') {
  return {
    where: q.cursor ? { id: order === 'asc' ? { gt: q.cursor } : { lt: q.cursor } } : {},
    orderBy: { id: order },
    take: q.limit + 1,
  } as const;
}

/** Cuts the extra row fetched by pageArgs into `nextCursor`. */
export function toPage<T extends { id: string }, U>(rows: T[], q: PageQuery, map: (row: T) => U): Page<U> {
  const more = rows.length > q.limit;
  const items = more ? rows.slice(0, q.limit) : rows;
  return { items: items.map(map), nextCursor: more ? items[items.length - 1]!.id : null };
}
