import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createDatabase, type Database, type PrismaClient, type Sql } from '@gantry/db';
import { APP_CONFIG, type AppConfig } from '../config/config';

/**
 * The Prisma client of the process, and typed SQL on the same pool for the hot paths
 * (submission, audit batches, placement commits). Only repositories inject it.
 *
 * `reads` has connections of its own (GANTRY_DB_READ_POOL_SIZE) for the read-only queries that
 * the console and the clients poll (the Overview's capacity, jobs per state and queue head; job
 * lists and details): those answers never queue behind hundreds of submissions waiting for a
 * connection, and a storm of polls never holds the connections submissions need. Made at its first
 * use (a worker answers none of them).
 */
@Injectable()
export class PrismaService implements OnApplicationShutdown, Database {
  readonly client: PrismaClient;
  readonly sql: Sql;
  private readOnly?: Database;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const db = createDatabase(config.databaseUrl, { max: config.dbPoolSize, transactionMaxWaitMs: config.dbTxMaxWaitMs });
    this.client = db.client;
    this.sql = db.sql;
  }

  get reads(): Database {
    return (this.readOnly ??= createDatabase(this.config.databaseUrl, { max: this.config.dbReadPoolSize, transactionMaxWaitMs: this.config.dbTxMaxWaitMs }));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.client.$disconnect(), this.readOnly?.client.$disconnect()]);
  }
}
