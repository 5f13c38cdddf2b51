import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { createPrismaClient, type PrismaClient } from '@gantry/db';
import { parseConfig } from './config/config';
import { eventually, makeTenant } from './test-support/system';

/**
 * Crash points end to end: the API and a worker as child processes (dist/main.js) on a
 * copy of the run's database. A worker armed with GANTRY_CRASH_POINTS kills itself (SIGKILL)
 * inside the placement commit, or right after it; the restarted worker must run the job exactly
 * once with no allocation left, even when the system's Redis keys were wiped meanwhile.
 */
const MAIN = resolve(__dirname, '../dist/main.js');
const ADMIN = 'gk_testadmin_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

async function freePort(): Promise<number> {
  return new Promise((ok, ko) => {
    const s = createServer();
    s.on('error', ko);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

describe('crash points (worker killed with SIGKILL, Redis wiped)', () => {
  const template = new URL(process.env.DATABASE_URL!);
  const name = `${template.pathname.slice(1)}_crash`;
  const url = new URL(template);
  url.pathname = `/${name}`;
  const prefix = `${process.env.GANTRY_QUEUE_PREFIX}-crash`;
  let admin: PrismaClient;
  let db: PrismaClient;
  let redis: IORedis;
  let api: ChildProcess | undefined;
  let worker: ChildProcess | undefined;
  let apiUrl = '';
  let output = '';

  const env = (extra: Record<string, string>) => ({
    ...process.env,
    DATABASE_URL: url.toString(),
    GANTRY_QUEUE_PREFIX: prefix,
    GANTRY_DRIVER: 'simulated',
    GANTRY_SIM_SPEED: '50',
    GANTRY_RECONCILE_SECONDS: '1',
    GANTRY_BOOTSTRAP_ADMIN_KEY: ADMIN,
    GANTRY_LOG_LEVEL: 'warn',
    ...extra,
  });
  const child = (extra: Record<string, string>) => {
    const c = spawn(process.execPath, [MAIN], { env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    return c;
  };
  const exited = (c: ChildProcess) =>
    new Promise<NodeJS.Signals | number | null>((r) =>
      c.exitCode !== null || c.signalCode !== null ? r(c.signalCode ?? c.exitCode) : c.once('exit', (code, sig) => r(sig ?? code)),
    );
  const startWorker = (crash?: string) => (worker = child({ GANTRY_MODE: 'worker', ...(crash ? { GANTRY_CRASH_POINTS: crash } : {}) }));
  const submit = async (auth: string, teamId: string, n: string) => {
    const r = await fetch(`${apiUrl}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({ teamId, name: n, kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 50 } }),
    });
    expect(r.status).toBe(201);
    return ((await r.json()) as { id: string }).id;
  };
  const wipeRedis = async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    return keys.length;
  };
  /** Exactly one run: placed once, running once, succeeded, every allocation ended. */
  const ranOnce = async (jobId: string) => {
    await eventually(async () => (await db.job.findUnique({ where: { id: jobId } }))?.state === 'succeeded', 40_000, 200);
    const events = await db.event.findMany({ where: { jobId }, select: { type: true } });
    expect(events.filter((e) => e.type === 'job.placed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'job.running')).toHaveLength(1);
    const allocs = await db.allocation.findMany({ where: { jobId } });
    expect(allocs).toHaveLength(1);
    expect(allocs.every((a) => a.endedAt !== null)).toBe(true);
  };

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} missing: build apps/api first (npx tsc -p tsconfig.build.json)`);
    admin = createPrismaClient(Object.assign(new URL(template), { pathname: '/postgres' }).toString(), { max: 1 });
    await admin.$executeRawUnsafe(`CREATE DATABASE "${name}" TEMPLATE "${template.pathname.slice(1)}"`);
    db = createPrismaClient(url.toString(), { max: 2 });
    const cfg = parseConfig({ ...process.env, DATABASE_URL: url.toString() });
    redis = new IORedis({ ...cfg.redis, lazyConnect: false });
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = child({ GANTRY_MODE: 'http', PORT: String(port) });
    await eventually(async () => (await fetch(`${apiUrl}/healthz`).catch(() => null))?.ok, 30_000, 200);
  }, 60_000);

  afterAll(async () => {
    for (const c of [worker, api]) if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await wipeRedis().catch(() => undefined);
    redis?.disconnect();
    await db?.$disconnect();
    await admin?.$executeRawUnsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin?.$disconnect();
  });

  it('dies inside the placement commit, rolls back, and the restarted worker runs the job once', async () => {
    startWorker('placement.commit=1');
    await eventually(async () => (await db.gpu.count()) > 0, 30_000, 200);
    const t = await makeTenant(db, 'crash-commit');
    const jobId = await submit(t.auth, t.team.id, 'commit');
    expect(await Promise.race([exited(worker!), new Promise((r) => setTimeout(() => r('alive'), 20_000))])).toBe('SIGKILL');
    expect(output).toContain('CRASH POINT placement.commit');
    // the transaction died with the process: still pending, nothing held
    expect((await db.job.findUniqueOrThrow({ where: { id: jobId } })).state).toBe('pending');
    expect(await db.allocation.count({ where: { jobId } })).toBe(0);
    startWorker();
    await ranOnce(jobId);
  }, 60_000);

  it('dies after the commit, Redis is wiped, and the reconciler still starts the placed and the queued job', async () => {
    worker!.kill('SIGKILL');
    await exited(worker!);
    startWorker('placement.committed=1');
    const t = await makeTenant(db, 'crash-committed');
    const placed = await submit(t.auth, t.team.id, 'committed');
    expect(await Promise.race([exited(worker!), new Promise((r) => setTimeout(() => r('alive'), 20_000))])).toBe('SIGKILL');
    // committed, but its start message was never sent: starting, GPUs held
    expect((await db.job.findUniqueOrThrow({ where: { id: placed } })).state).toBe('starting');
    // a job accepted while no worker runs; then every queue key of the system is lost
    const queued = await submit(t.auth, t.team.id, 'queued');
    expect(await wipeRedis()).toBeGreaterThan(0);
    startWorker();
    await ranOnce(placed);
    await ranOnce(queued);
  }, 60_000);
});
