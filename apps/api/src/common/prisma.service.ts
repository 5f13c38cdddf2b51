import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createDatabase, type PrismaClient, type Sql } from '@gantry/db';
import { APP_CONFIG, type AppConfig } from '../config/config';

/**
 * The one Prisma client of the process, and typed SQL on the same pool for the hot paths
 * (submission, audit batches, placement commits). Only repositories inject it.
 */
@Injectable()
export class PrismaService implements OnApplicationShutdown {
  readonly client: PrismaClient;
  readonly sql: Sql;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const db = createDatabase(config.databaseUrl, { max: config.dbPoolSize, transactionMaxWaitMs: config.dbTxMaxWaitMs });
    this.client = db.client;
    this.sql = db.sql;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.$disconnect();
  }
}
