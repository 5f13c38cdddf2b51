import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { createPrismaClient, type PrismaClient } from '@gantry/db';
import { APP_CONFIG, type AppConfig } from '../config/config';

/** The one Prisma client of the process. Only repositories inject it. */
@Injectable()
export class PrismaService implements OnApplicationShutdown {
  readonly client: PrismaClient;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = createPrismaClient(config.databaseUrl, { max: config.dbPoolSize, transactionMaxWaitMs: config.dbTxMaxWaitMs });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.$disconnect();
  }
}
