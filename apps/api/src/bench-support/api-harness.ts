import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseConfig, type AppConfig } from '../config/config';
import { HttpModule } from '../app.module';
import { configureHttp } from '../http';

/**
 * The REST API booted in-process for benchmarks (packages/bench), the same HttpModule as
 * production, listening on a free port of 127.0.0.1: requests go through HTTP as a client's do.
 */
export interface BenchApi {
  config: AppConfig;
  app: INestApplication;
  url: string;
  close(): Promise<void>;
}

export async function startBenchApi(opts: { env: Record<string, string> }): Promise<BenchApi> {
  const config = parseConfig({ ...process.env, GANTRY_LOG_LEVEL: 'warn', ...opts.env, GANTRY_MODE: 'http' });
  const app = await NestFactory.create(HttpModule.forRoot(config), { bodyParser: false, logger: ['error'], forceCloseConnections: true });
  configureHttp(app);
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  return { config, app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
