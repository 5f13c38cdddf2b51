import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/config';

/** A shared ioredis connection for non-queue uses (readiness, locks, counters). */
@Injectable()
export class RedisService implements OnApplicationShutdown {
  readonly client: Redis;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = new Redis({ ...config.redis, lazyConnect: true, maxRetriesPerRequest: 2 });
    this.client.on('error', () => undefined); // readiness reports it; avoid unhandled error events
  }

  async onApplicationShutdown(): Promise<void> {
    this.client.disconnect();
  }
}
