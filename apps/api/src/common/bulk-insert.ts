import { Prisma, type Tx } from '@gantry/db';

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
export async function insertAll<R>(tx: Tx, table: string, columns: readonly Column<R>[], rows: readonly R[]): Promise<void> {
  const names = Prisma.raw(columns.map((c) => `"${c.name}"`).join(', '));
  const selects = Prisma.raw(columns.map((c, k) => `u.c${k}${c.cast ? `::${c.cast}` : ''}`).join(', '));
  const alias = Prisma.raw(columns.map((_, k) => `c${k}`).join(', '));
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const arrays = columns.map((c) => Prisma.sql`${chunk.map(c.value)}::${Prisma.raw(c.type)}[]`);
    await tx.$executeRaw`INSERT INTO ${Prisma.raw(`"${table}"`)} (${names}) SELECT ${selects} FROM unnest(${Prisma.join(arrays)}) AS u(${alias})`;
  }
}
