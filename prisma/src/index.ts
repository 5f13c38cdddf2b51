import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { Prisma, PrismaClient } from '../generated/client';

export * from '../generated/client';
export * from './api-keys';
export * from './seed-factories';

/** A Prisma client over the pg driver adapter (no native query engine needed). */
export function createPrismaClient(databaseUrl: string, opts: { max?: number; transactionMaxWaitMs?: number } = {}): PrismaClient {
  return createDatabase(databaseUrl, opts).client;
}

/**
 * Typed SQL on the driver adapter's own connection pool, for hot paths where Prisma's per-query
 * compilation costs more than the statement: one round trip, no query plan to build. Values are
 * always parameters ($1, $2...). Timestamps (`timestamp(3)`, stored as UTC) come back as Dates.
 */
export interface Sql {
  query<T>(text: string, values?: readonly unknown[]): Promise<T[]>;
  /**
   * Statements on one pooled connection between BEGIN and COMMIT (ROLLBACK when `fn` throws).
   * For writes with large parameter arrays (80,000-element telemetry ticks): Prisma's raw
   * queries pass every parameter through its query compiler, about four times the CPU of the
   * driver's own binding.
   */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>, options?: SqlTxOptions): Promise<T>;
}

export interface SqlTxOptions {
  /** `repeatable read`: every statement sees the snapshot of the first (a consistent read of several tables). Postgres's default otherwise. */
  isolation?: 'repeatable read';
}

/** Typed SQL inside `Sql.transaction`: rows of a query, or the rows a statement changed. */
export interface SqlTx extends Pick<Sql, 'query'> {
  execute(text: string, values?: readonly unknown[]): Promise<number>;
}

/** The longest an interactive transaction (Prisma's) or one statement of `Sql.transaction` may run. */
const TRANSACTION_TIMEOUT_MS = 15_000;

const TIMESTAMP_OID = 1114;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID ? (v: string) => new Date(`${v.replace(' ', 'T')}Z`) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** A Prisma client and typed SQL over one pool of connections. */
export interface Database {
  readonly client: PrismaClient;
  readonly sql: Sql;
}

/** The Prisma client and typed SQL over one pool (closed by the client's $disconnect). */
export function createDatabase(databaseUrl: string, opts: { max?: number; transactionMaxWaitMs?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.max ?? 10, connectionTimeoutMillis: opts.transactionMaxWaitMs ?? 10_000 });
  // An idle connection that Postgres closes (a restart, pg_terminate_backend) is dropped from the
  // pool, which then reports it as an 'error' event: with no listener, Node would end the process.
  // Prisma's adapter listens only once Prisma has connected, and typed SQL may come first.
  pool.on('error', () => undefined);
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  // maxWait: how long a transaction may wait for a pooled connection (Prisma's default, 2 s, turns a burst into errors).
  const client = new PrismaClient({ adapter, transactionOptions: { maxWait: opts.transactionMaxWaitMs ?? 10_000, timeout: TRANSACTION_TIMEOUT_MS } });
  const sql: Sql = {
    async query<T>(text: string, values: readonly unknown[] = []) {
      const r = await pool.query({ text, values: values as unknown[], types });
      return r.rows as T[];
    },
    async transaction<T>(fn: (tx: SqlTx) => Promise<T>, options: SqlTxOptions = {}): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      // a checked-out connection that Postgres closes between two statements reports it as an
      // 'error' event (the pool listens only to idle ones): the transaction's next statement fails,
      // and the connection is dropped, not returned
      const lost = (e: Error) => (broken = e);
      client.on('error', lost);
      try {
        // no statement waits longer than Prisma's whole interactive transaction may last (a lock
        // wait that never ends would hold the connection and its caller for good)
        const isolation = options.isolation === 'repeatable read' ? ' ISOLATION LEVEL REPEATABLE READ' : '';
        await client.query(`BEGIN${isolation}; SET LOCAL statement_timeout = ${TRANSACTION_TIMEOUT_MS}`);
        const out = await fn({
          async query<R>(text: string, values: readonly unknown[] = []) {
            const r = await client.query({ text, values: values as unknown[], types });
            return r.rows as R[];
          },
          async execute(text: string, values: readonly unknown[] = []) {
            const r = await client.query({ text, values: values as unknown[], types });
            return r.rowCount ?? 0;
          },
        });
        await client.query('COMMIT');
        return out;
      } catch (e) {
        // a connection that cannot roll back is dropped, not returned to the pool
        await client.query('ROLLBACK').catch((r: Error) => (broken = r));
        throw e;
      } finally {
        client.removeListener('error', lost);
        client.release(broken);
      }
    },
  };
  // Prisma's $disconnect ends the pool only when Prisma itself has connected through it; a pool
  // that served typed SQL alone would keep its connections (and the process) alive until they idle out
  const disconnect = client.$disconnect.bind(client);
  client.$disconnect = async () => {
    await disconnect();
    if (!pool.ended) await pool.end();
  };
  sqlOfClient.set(client, sql);
  return { client, sql };
}

const sqlOfClient = new WeakMap<PrismaClient, Sql>();

/** The typed SQL on the pool of `client` (made by `createDatabase` or `createPrismaClient`). */
export function sqlOf(client: PrismaClient): Sql {
  const sql = sqlOfClient.get(client);
  if (!sql) throw new Error('sqlOf: this Prisma client was not made by createDatabase, so it has no typed SQL on its pool');
  return sql;
}

export type Tx = Prisma.TransactionClient;
