import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../generated/client';

export * from '../generated/client';
export * from './api-keys';
export * from './seed-factories';

/** A Prisma client over the pg driver adapter (no native query engine needed). */
export function createPrismaClient(databaseUrl: string, opts: { max?: number; transactionMaxWaitMs?: number } = {}): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: opts.max ?? 10 });
  // maxWait: how long a transaction may wait for a pooled connection (Prisma's default, 2 s, turns a burst into errors).
  return new PrismaClient({ adapter, transactionOptions: { maxWait: opts.transactionMaxWaitMs ?? 10_000, timeout: 15_000 } });
}

export type Tx = Prisma.TransactionClient;
