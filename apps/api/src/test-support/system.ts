import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createApiKey, createDatabase, createTeam, createTenant, createPrismaClient, type PrismaClient, type Role, type Sql } from '@gantry/db';
import { parseConfig, type AppConfig } from '../config/config';
import { HttpModule, WorkerModule } from '../app.module';
import { configureHttp } from '../http';
import { openSystems } from './open-systems';

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
  /**
   * Stops the API and the worker (as `npm run dev` is stopped) and starts them again on the same
   * database and Redis prefix: the in-process simulated cluster comes back fresh, as a restarted
   * simulated driver does. `api`, `worker` and `http` point at the new processes afterwards.
   */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export const BOOTSTRAP_ADMIN_KEY = 'gk_testadmin_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Longest any one teardown step may take; a step past it is abandoned and reported. */
export const TEARDOWN_STEP_MS = 15_000;

/** Resolves with `p`, or rejects naming `what` once `ms` pass (the timer never holds the process). */
export function within<T>(what: string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs every step, each bounded by TEARDOWN_STEP_MS, whatever the earlier ones did; throws
 * once at the end naming each step that failed, so a broken teardown is loud but complete.
 */
async function teardown(what: string, steps: Array<[string, () => Promise<unknown>]>): Promise<void> {
  const failures: string[] = [];
  for (const [step, run] of steps) {
    try {
      await within(`${what}: ${step}`, Promise.resolve().then(run), TEARDOWN_STEP_MS);
    } catch (e) {
      failures.push(e instanceof Error ? e.message : String(e));
    }
  }
  if (failures.length) throw new Error(`teardown failed: ${failures.join('; ')}`);
}

/** A name no other system of this run (in any Jest worker or test file) can have. */
function uniqueSuffix(): string {
  return `${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** A fresh database copied from the run's migrated one (global-setup), dropped by `drop()`. */
async function copyOfRunDatabase(suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const template = new URL(process.env.DATABASE_URL!);
  const name = `${template.pathname.slice(1)}_s${suffix}`;
  const admin = new URL(template);
  admin.pathname = '/postgres';
  const pg = createPrismaClient(admin.toString(), { max: 1 });
  try {
    await pg.$executeRawUnsafe(`CREATE DATABASE "${name}" TEMPLATE "${template.pathname.slice(1)}"`);
  } catch (e) {
    await pg.$disconnect();
    throw e;
  }
  const url = new URL(template);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      try {
        await pg.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await pg.$disconnect();
      }
    },
  };
}

/**
 * A database of its own (a copy of the run's migrated one) and a client on it, without the API
 * or a worker: for specs of repositories. `close()` is bounded and always drops the database.
 */
export async function startDatabase(): Promise<{ url: string; db: PrismaClient; sql: Sql; close(): Promise<void> }> {
  const database = await copyOfRunDatabase(uniqueSuffix());
  const { client: db, sql } = createDatabase(database.url, { max: 3 });
  let closing: Promise<void> | undefined;
  const handle = {
    url: database.url,
    db,
    sql,
    close() {
      openSystems.delete(handle);
      closing ??= teardown('closing a test database', [
        ['disconnecting the test client', () => db.$disconnect()],
        ['dropping the database', () => database.drop()],
      ]);
      return closing;
    },
  };
  openSystems.add(handle);
  return handle;
}

/** Deletes every Redis key under `prefix` (queues, locks, rate-limit buckets, channels). */
export async function deleteRedisKeys(redis: AppConfig['redis'], prefix: string): Promise<void> {
  const client = new Redis({ ...redis, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/**
 * Starts the API and a worker on a database and queue prefix of their own. When any part
 * fails to start, what did start is closed and the database dropped before the error is
 * thrown; `close()` always frees the database, the queues and the connections, each step
 * bounded, even when a test or another step failed.
 */
export async function startSystem(env: Record<string, string> = {}): Promise<TestSystem> {
  const suffix = uniqueSuffix();
  const database = await copyOfRunDatabase(suffix);
  let config: AppConfig | undefined;
  let api: INestApplication | undefined;
  let worker: INestApplicationContext | undefined;
  let db: PrismaClient | undefined;
  const free = (what: string) =>
    teardown(what, [
      ['closing the API', async () => api?.close()],
      ['closing the worker', async () => worker?.close()],
      ['disconnecting the test client', async () => db?.$disconnect()],
      ['dropping the database', () => database.drop()],
      ['deleting the queue keys', async () => config && deleteRedisKeys(config.redis, config.queuePrefix)],
    ]);
  try {
    config = parseConfig({
      ...process.env,
      DATABASE_URL: database.url,
      GANTRY_QUEUE_PREFIX: `${process.env.GANTRY_QUEUE_PREFIX}-s${suffix}`,
      GANTRY_SIM_SPEED: '50',
      GANTRY_RECONCILE_SECONDS: '1',
      GANTRY_BOOTSTRAP_ADMIN_KEY: BOOTSTRAP_ADMIN_KEY,
      GANTRY_LOG_LEVEL: 'warn',
      GANTRY_SHUTDOWN_GRACE_SECONDS: '5',
      ...env,
    });
    const cfg = config;
    const boot = async () => {
      worker = await NestFactory.createApplicationContext(WorkerModule.forRoot({ ...cfg, mode: 'worker' }), { logger: ['error'] });
      api = await NestFactory.create(HttpModule.forRoot(cfg), { bodyParser: false, logger: ['error'], forceCloseConnections: true });
      configureHttp(api);
      await api.init();
    };
    await boot();
    db = createPrismaClient(cfg.databaseUrl, { max: 3 });
    let closing: Promise<void> | undefined;
    const sys: TestSystem = {
      config: cfg,
      api: api!,
      worker: worker!,
      db,
      http: () => request(sys.api.getHttpServer()),
      async restart() {
        await teardown('stopping the test system for a restart', [
          ['closing the API', async () => api?.close()],
          ['closing the worker', async () => worker?.close()],
        ]);
        api = undefined;
        worker = undefined;
        await boot();
        sys.api = api!;
        sys.worker = worker!;
      },
      close() {
        openSystems.delete(sys);
        closing ??= free('closing the test system');
        return closing;
      },
    };
    openSystems.add(sys);
    return sys;
  } catch (e) {
    await free('cleaning up a test system that failed to start').catch((c: unknown) => {
      console.error(c instanceof Error ? c.message : c);
    });
    throw e;
  }
}

/** A tenant with one team (with a quota) and a key for it. */
export async function makeTenant(db: PrismaClient, slug: string, opts: { role?: Role; scopes?: string[]; quota?: { guaranteed: number; limit: number } } = {}) {
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
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, ms = 30_000, every = 100): Promise<T> {
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
