import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { createPrismaClient, type PrismaClient } from '@gantry/db';
import { APP_CONFIG, type AppConfig } from '../config/config';

/** The one Prisma client of the process. Only repositories inject it. */
@Injectable()
export class PrismaService implements OnModuleDestroy {
  readonly client: PrismaClient;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = createPrismaClient(config.databaseUrl, { max: config.dbPoolSize });
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
  }
}
