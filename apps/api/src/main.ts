import 'reflect-metadata';
import { getPriority, setPriority } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseConfig } from './config/config';
import { HttpModule, WorkerModule } from './app.module';
import { configureHttp } from './http';

async function main(): Promise<void> {
  const config = parseConfig();
  limitHeapGrowth(config.heapGrowthPercent);
  const logger = ['error', 'warn', 'log', 'debug'].slice(0, ['error', 'warn', 'log', 'debug'].indexOf(config.logLevel) + 1) as (
    'error' | 'warn' | 'log' | 'debug'
  )[];
  if (config.mode === 'worker') {
    lowerPriority(config.workerNice);
    const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger });
    app.enableShutdownHooks();
    new Logger('gantry').log(`worker up (driver ${config.driver.kind})`);
    return;
  }
  const app = await NestFactory.create(HttpModule.forRoot(config), { bodyParser: false, logger });
  app.enableShutdownHooks();
  configureHttp(app);
  await app.listen(config.port, '0.0.0.0');
  // Idle keep-alive connections outlive those of the proxies in front (the console's server, load
  // balancers: typically 60 s), so a proxy never sends a request on a connection this server is
  // closing at that moment (the proxy would answer 502/500 "socket hang up").
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  new Logger('gantry').log(`api listening on :${config.port}`);
}

/**
 * The heap grows at most `percent` past what the last full collection left live before the next
 * one (GANTRY_HEAP_GROWTH_PERCENT; 0 leaves V8's policy). V8 reads the setting each time it sets
 * the next limit, so setting it at boot applies to every collection after.
 */
function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** A worker yields the CPU to the API on a shared host (GANTRY_WORKER_NICE); a host that refuses keeps it as it is. */
function lowerPriority(nice: number): void {
  if (nice <= 0) return;
  try {
    setPriority(Math.max(getPriority(), nice));
  } catch (e) {
    new Logger('gantry').warn(`could not lower the worker's CPU priority to nice ${nice}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
