import { type AnyTx, execute } from './any-tx';

/** One column of a bulk insert: its name, the Postgres array element type it is sent as, an optional cast, its value in a row. */
export interface Column<R> {
  name: string;
  type: 'text' | 'int' | 'float8' | 'numeric' | 'timestamp(3)';
  cast?: string;
  value: (r: R) => unknown;
}

const INSERT_CHUNK = 5_000;

/** A timestamp(3) parameter: the ISO string of a Date (or null). */
export const sqlTime = (d: Date | string | null | undefined): string | null => (d ? new Date(d).toISOString() : null);

/**
 * Inserts rows with one `INSERT ... SELECT FROM unnest(arrays)` per chunk of 5,000: one array
 * parameter per column, whatever the number of rows. Prisma's createMany compiles and binds
 * every value of every row (the past's thousands of rows took seconds per thousand; a cycle's
 * placements a few milliseconds per commit).
 */
export async function insertAll<R>(tx: AnyTx, table: string, columns: readonly Column<R>[], rows: readonly R[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const { text, values } = insertStatement(table, columns, rows.slice(i, i + INSERT_CHUNK));
    await execute(tx, text, values);
  }
}

/**
 * The `INSERT ... SELECT FROM unnest(arrays)` of `rows`, its array parameters numbered from
 * `$first`: for a caller that makes it one part of a larger statement (a data-modifying WITH).
 * Every row in one statement: the caller keeps `rows` to a chunk.
 */
export function insertStatement<R>(table: string, columns: readonly Column<R>[], rows: readonly R[], first = 1): { text: string; values: unknown[][] } {
  const names = columns.map((c) => `"${c.name}"`).join(', ');
  const selects = columns.map((c, k) => `u.c${k}${c.cast ? `::${c.cast}` : ''}`).join(', ');
  const alias = columns.map((_, k) => `c${k}`).join(', ');
  const arrays = columns.map((c, k) => `$${first + k}::${c.type}[]`).join(', ');
  return {
    text: `INSERT INTO "${table}" (${names}) SELECT ${selects} FROM unnest(${arrays}) AS u(${alias})`,
    values: columns.map((c) => rows.map(c.value)),
  };
}
