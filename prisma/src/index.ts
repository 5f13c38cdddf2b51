import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../generated/client';

export * from '../generated/client';
export * from './api-keys';
export * from './seed-factories';

/** A Prisma client over the pg driver adapter (no native query engine needed). */
export function createPrismaClient(databaseUrl: string, opts: { max?: number } = {}): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: opts.max ?? 10 });
  return new PrismaClient({ adapter });
}

export type Tx = Prisma.TransactionClient;
