import { z } from 'zod';

/** The error envelope every non-2xx answer carries (docs/design.md section 7). */
export const ZErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ field: z.string().optional(), problem: z.string() })).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ZErrorBody>;

/**
 * Cursor pagination: `?limit=&cursor=` -> `{ items, nextCursor }`. Strict like every request
 * schema (a misspelt parameter is a 400 naming it, not a filter silently ignored); `.extend()`
 * keeps that.
 */
export const ZPageQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict();
export type PageQuery = z.infer<typeof ZPageQuery>;

export const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const ZSlug = z
  .string()
  .min(2)
  .max(48)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be lowercase letters, digits and dashes');

export const ZId = z.string().min(1).max(64);
