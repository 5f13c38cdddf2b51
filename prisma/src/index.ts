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
}

const TIMESTAMP_OID = 1114;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMP_OID ? (v: string) => new Date(`${v.replace(' ', 'T')}Z`) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The Prisma client and typed SQL over one pool (closed by the client's $disconnect). */
export function createDatabase(databaseUrl: string, opts: { max?: number; transactionMaxWaitMs?: number } = {}): { client: PrismaClient; sql: Sql } {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.max ?? 10, connectionTimeoutMillis: opts.transactionMaxWaitMs ?? 10_000 });
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  // maxWait: how long a transaction may wait for a pooled connection (Prisma's default, 2 s, turns a burst into errors).
  const client = new PrismaClient({ adapter, transactionOptions: { maxWait: opts.transactionMaxWaitMs ?? 10_000, timeout: 15_000 } });
  const sql: Sql = {
    async query<T>(text: string, values: readonly unknown[] = []) {
      const r = await pool.query({ text, values: values as unknown[], types });
      return r.rows as T[];
    },
  };
  return { client, sql };
}

export type Tx = Prisma.TransactionClient;
