import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { createApiKey, createTeam, createTenant, createPrismaClient, type PrismaClient, type Role } from '@gantry/db';
import { parseConfig, type AppConfig } from '../config/config';
import { HttpModule, WorkerModule } from '../app.module';
import { configureHttp } from '../http';

/**
 * The whole system in one test process: the REST API and a worker on the simulated
 * cluster. Each system gets its own database (a copy of the run's migrated database, made
 * in milliseconds by Postgres from a template) and its own Redis key prefix, so spec files
 * never see each other's cluster state, jobs or queue work.
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

let systems = 0;

/** A fresh database copied from the run's migrated one (global-setup), dropped by `drop()`. */
async function copyOfRunDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = new URL(process.env.DATABASE_URL!);
  const name = `${template.pathname.slice(1)}_s${++systems}`;
  const admin = new URL(template);
  admin.pathname = '/postgres';
  const pg = createPrismaClient(admin.toString(), { max: 1 });
  await pg.$executeRawUnsafe(`CREATE DATABASE "${name}" TEMPLATE "${template.pathname.slice(1)}"`);
  const url = new URL(template);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await pg.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await pg.$disconnect();
    },
  };
}

export async function startSystem(env: Record<string, string> = {}): Promise<TestSystem> {
  const database = await copyOfRunDatabase();
  const config = parseConfig({
    ...process.env,
    DATABASE_URL: database.url,
    GANTRY_QUEUE_PREFIX: `${process.env.GANTRY_QUEUE_PREFIX}-s${systems}`,
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
      await database.drop();
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
