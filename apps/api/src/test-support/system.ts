import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { createApiKey, createTeam, createTenant, createPrismaClient, type PrismaClient, type Role } from '@gantry/db';
import { parseConfig, type AppConfig } from '../config/config';
import { HttpModule, WorkerModule } from '../app.module';
import { configureHttp } from '../http';

/**
 * The whole system in one test process: the REST API and a worker on the simulated
 * cluster, against the database and Redis prefix made for this test run.
 */
export interface TestSystem {
  config: AppConfig;
  api: INestApplication;
  worker: INestApplicationContext;
  db: PrismaClient;
  http: () => ReturnType<typeof request>;
  close(): Promise<void>;
}

export const BOOTSTRAP_ADMIN_KEY = 'gk_testadmin_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export async function startSystem(env: Record<string, string> = {}): Promise<TestSystem> {
  const config = parseConfig({
    ...process.env,
    GANTRY_SIM_SPEED: '50',
    GANTRY_RECONCILE_SECONDS: '1',
    GANTRY_BOOTSTRAP_ADMIN_KEY: BOOTSTRAP_ADMIN_KEY,
    GANTRY_LOG_LEVEL: 'warn',
    ...env,
  });
  const worker = await NestFactory.createApplicationContext(WorkerModule.forRoot({ ...config, mode: 'worker' }), { logger: ['error'] });
  const api = await NestFactory.create(HttpModule.forRoot(config), { bodyParser: false, logger: ['error'] });
  configureHttp(api);
  await api.init();
  const db = createPrismaClient(config.databaseUrl, { max: 3 });
  return {
    config,
    api,
    worker,
    db,
    http: () => request(api.getHttpServer()),
    async close() {
      await api.close();
      await worker.close();
      await db.$disconnect();
    },
  };
}

/** A tenant with one team (with a quota) and a key for it. */
export async function makeTenant(
  db: PrismaClient,
  slug: string,
  opts: { role?: Role; scopes?: string[]; quota?: { guaranteed: number; limit: number } } = {},
) {
  const tenant = await createTenant(db, { name: slug, slug });
  const team = await createTeam(db, tenant.id, { name: `${slug} team`, slug: 'team', quota: opts.quota ?? { guaranteed: 64, limit: 128 } });
  const key = await createApiKey(db, {
    name: `${slug} key`,
    role: opts.role ?? 'member',
    tenantId: tenant.id,
    teamId: team.id,
    scopes: opts.scopes ?? ['jobs:read', 'jobs:write', 'cluster:read'],
  });
  return { tenant, team, key: key.key, auth: `Bearer ${key.key}` };
}

/** Polls `fn` until it returns a truthy value or the deadline passes. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, ms = 15000, every = 100): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, every));
  }
  throw new Error(`condition not met within ${ms} ms${last ? `: ${String(last)}` : ''}`);
}
