import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { createPrismaClient, type PrismaClient } from '@gantry/db';
import type { ClusterDriver } from '@gantry/driver';
import { parseConfig, type AppConfig } from '../config/config';
import { WorkerModule } from '../app.module';
import { QueuesService } from '../queues/queues.service';
import { activeSlotKey } from '../modules/allocations/active-slot';

/**
 * A worker booted in-process for benchmarks (packages/bench): the same WorkerModule as
 * production, on a cluster driver the caller built (e.g. 1,000 simulated nodes, zero delays),
 * against a database the caller created and migrated.
 */
export interface BenchWorker {
  config: AppConfig;
  worker: INestApplicationContext;
  db: PrismaClient;
  /**
   * Creates a job already placed on the given GPUs (state `starting` and its allocations in one
   * transaction, as a scheduling commit leaves them, so no cycle can take it meanwhile), then
   * asks the lifecycle to start it through the driver.
   */
  placeNew(job: { tenantId: string; teamId: string; name: string; gpuModel: string }, gpus: { nodeId: string; gpuId: string }[]): Promise<string>;
  close(): Promise<void>;
}

export async function startBenchWorker(opts: { env: Record<string, string>; driver: ClusterDriver }): Promise<BenchWorker> {
  const config = parseConfig({ ...process.env, GANTRY_LOG_LEVEL: 'warn', ...opts.env, GANTRY_MODE: 'worker' });
  const worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, { driver: opts.driver }), { logger: ['error'] });
  const db = createPrismaClient(config.databaseUrl, { max: 4 });
  const queues = worker.get(QueuesService);
  return {
    config,
    worker,
    db,
    async placeNew(job, gpus) {
      const id = await db.$transaction(async (tx) => {
        const row = await tx.job.create({
          data: {
            tenantId: job.tenantId,
            teamId: job.teamId,
            name: job.name,
            kind: 'training',
            state: 'starting',
            replicas: 1,
            resources: { gpus: gpus.length, gpuModel: job.gpuModel, cpuMilli: 1000, memoryMiB: 4096 },
          },
        });
        await tx.allocation.createMany({
          data: gpus.map((g, i) => ({
            tenantId: job.tenantId,
            teamId: job.teamId,
            jobId: row.id,
            replica: 0,
            nodeId: g.nodeId,
            gpuId: g.gpuId,
            gpuModel: job.gpuModel,
            milli: 1000,
            gpuUnits: 1,
            cpuMilli: i === 0 ? 1000 : 0,
            memoryMiB: i === 0 ? 4096 : 0,
            activeSlot: activeSlotKey({ gpuId: g.gpuId, milli: 1000 }),
          })),
        });
        return row.id;
      });
      await queues.lifecycle({ action: 'start', jobId: id });
      return id;
    },
    async close() {
      await worker.close();
      await db.$disconnect();
      // this run's BullMQ keys
      const redis = new Redis({ ...config.redis, lazyConnect: true });
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${config.queuePrefix}:*`, 'COUNT', 500);
        cursor = next;
        if (keys.length) await redis.del(...keys);
      } while (cursor !== '0');
      redis.disconnect();
    },
  };
}
