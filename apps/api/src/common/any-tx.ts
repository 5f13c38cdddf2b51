import type { SqlTx, Tx } from '@gantry/db';

/** A transaction of either kind: Prisma's interactive one, or typed SQL on one pooled connection (`Sql.transaction`). */
export type AnyTx = Tx | SqlTx;

/** Runs one statement with $n parameters in either kind of transaction; the rows it changed. */
export function execute(tx: AnyTx, text: string, values: readonly unknown[]): Promise<number> {
  return 'execute' in tx ? tx.execute(text, values) : tx.$executeRawUnsafe(text, ...values);
}
