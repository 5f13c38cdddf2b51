/**
 * Crash loop (proving that the system holds): the system as separate processes (cluster host, API,
 * two workers on GANTRY_DRIVER=remote) on its own Postgres cluster and its own Redis server,
 * under a steady mixed workload (whole GPUs, MIG slices, shares, gangs, VM jobs, suspend and
 * resume, xid and node-down faults). `kills` times: a worker is restarted with one crash point
 * armed (round robin over every point, plus plain kill -9 at a random moment), dies there, and
 * is restarted clean. Every 10th iteration Redis restarts empty; every 25th Postgres restarts
 * (pg_ctl restart -m immediate). Then the load stops, the system settles, and the database must
 * hold: the invariant checker (settled) finds nothing, every job is terminal or pending with a
 * reason, no GPU stuck out of scheduling, every accepted job exists.
 *
 *   pnpm --silent bench crash [--kills 50] [--json]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey, createPrismaClient, createTeam, createTenant, Prisma } from '@gantry/db';
import { generateTopology } from '@gantry/driver';
import { checkInvariants, CRASH_POINTS, type InvariantViolation } from '@gantry/api/bench-support';
import { BENCH_ADMIN_KEY, freePort, startSystemProcesses, type ManagedProcess, type RunningSystem } from './processes';
import { Rng } from './rng';
import { scratchDatabase } from './scratch-db';
import { gpusRegistered, sleep } from './waiting';

export interface CrashReport {
  bench: 'crash';
  kills: number;
  gpus: number;
  /** Times each crash point killed a worker (armed and reached), and plain kill -9s. */
  fired: Record<string, number>;
  /** Armed points the worker did not reach within the window (then killed from outside). */
  notReached: Record<string, number>;
  redisRestarts: number;
  postgresRestarts: number;
  postgresRestartsShared: false;
  submitted: number;
  accepted: number;
  jobsInDb: number;
  lost: string[];
  jobs: Record<string, number>;
  /** Jobs neither terminal nor pending with a reason (after settling). */
  offenders: { id: string; state: string; reasons: unknown }[];
  stuckGpus: string[];
  settleSeconds: number;
  settled: boolean;
  violations: InvariantViolation[];
  seconds: number;
  pass: boolean;
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A Postgres cluster of our own (initdb in a temp dir, run as the postgres user): restartable at will. */
class OwnPostgres {
  readonly dir: string;
  constructor(readonly port: number) {
    this.dir = mkdtempSync(join(tmpdir(), 'gantry-crash-pg-'));
  }
  private asPostgres(args: string[]): void {
    execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  init(): void {
    const pgUid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const pgGid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(this.dir, pgUid, pgGid);
    this.asPostgres([`${PG_BIN}/initdb`, '-D', join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    this.asPostgres([
      `${PG_BIN}/pg_ctl`,
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`,
      'start',
    ]);
  }
  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }
  restartImmediate(): void {
    this.asPostgres([`${PG_BIN}/pg_ctl`, '-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-w', '-t', '60', '-m', 'immediate', 'restart']);
  }
  destroy(): void {
    try {
      this.asPostgres([`${PG_BIN}/pg_ctl`, '-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already down
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A Redis server of our own, without persistence: a restart loses every key. */
class OwnRedis {
  private child?: ChildProcess;
  constructor(readonly port: number) {}
  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.child = child;
    for (let i = 0; i < 100; i++) {
      try {
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'pipe' });
        return;
      } catch {
        await sleep(100);
      }
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }
  async kill(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGKILL');
    await exited;
  }
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}

type Point = (typeof CRASH_POINTS)[number] | 'external';

export async function runCrash(o: { kills: number; seed: number }, log: (s: string) => void): Promise<CrashReport> {
  const t0 = Date.now();
  const rng = new Rng(o.seed);
  const pg = new OwnPostgres(await freePort());
  pg.init();
  log(`own postgres on ${pg.port} (${pg.dir})`);
  const redis = new OwnRedis(await freePort());
  await redis.start();
  log(`own redis on ${redis.port} (no persistence)`);
  const savedUrl = process.env.DATABASE_URL;
  process.env.DATABASE_URL = pg.url;
  const scratch = scratchDatabase('crash', log);
  if (savedUrl === undefined) delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = savedUrl;
  const topology = generateTopology({ spines: 1, leavesPerSpine: 2, nodesPerLeaf: 8, gpusPerNode: 8, models: ['H100-80GB'] });
  const db = createPrismaClient(scratch.url, { max: 3 });
  let sys: RunningSystem | undefined;
  let submitting = true;
  try {
    sys = await startSystemProcesses({
      databaseUrl: scratch.url,
      id: scratch.id,
      topology,
      simSpeed: 20,
      simDelays: { startSeconds: 2, migApplySeconds: 10, suspendSeconds: 2, personaSwitchSeconds: 20, gpuResetSeconds: 10, rebootSeconds: 20 },
      workers: 2,
      env: { REDIS_URL: redis.url, GANTRY_RECONCILE_SECONDS: '2' },
      log,
    });
    const s = sys;
    const gpus = await gpusRegistered(db, 128, 120_000, true);
    const tenant = await createTenant(db, { name: 'crash', slug: 'crash' });
    const team = await createTeam(db, tenant.id, { name: 'crash', slug: 'crash', quota: { guaranteed: 512, limit: 512 } });
    const key = (await createApiKey(db, { name: 'crash', role: 'member', tenantId: tenant.id, teamId: team.id, scopes: ['jobs:read', 'jobs:write'] })).key;
    const nodes = await db.node.findMany({ orderBy: { name: 'asc' }, include: { gpus: { orderBy: { index: 'asc' } } } });
    log(`${nodes.length} nodes, ${gpus} GPUs; ${o.kills} kills`);

    const api = async (method: string, path: string, body: unknown, auth = key, idem?: string): Promise<{ status: number; json: unknown }> => {
      for (let attempt = 0; ; attempt++) {
        try {
          const r = await fetch(`${s.apiUrl}${path}`, {
            method,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}`, ...(idem ? { 'idempotency-key': idem } : {}) },
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(15_000),
          });
          const text = await r.text();
          if (r.status >= 500 && idem && attempt < 20) {
            await sleep(500);
            continue;
          }
          return { status: r.status, json: text ? (JSON.parse(text) as unknown) : null };
        } catch (e) {
          if (!idem || attempt >= 20) return { status: 0, json: String(e) };
          await sleep(500);
        }
      }
    };

    // ---- workload ------------------------------------------------------------------------
    const accepted: string[] = [];
    let submitted = 0;
    const rejected: Record<string, number> = {};
    const jobBody = (i: number): Record<string, unknown> => {
      const r = rng.next();
      const base = { teamId: team.id, name: `crash-${i}`, kind: 'batch', simulation: { durationSeconds: 20 + rng.int(80) }, preemptible: rng.next() < 0.2 };
      if (r < 0.3) return { ...base, resources: { gpus: 1 + rng.int(2) } };
      if (r < 0.4) return { ...base, kind: 'training', resources: { gpus: [4, 8][rng.int(2)] } };
      if (r < 0.45) return { ...base, kind: 'training', replicas: 2, resources: { gpus: 8 }, topology: { level: 'leaf', required: true } };
      if (r < 0.65) return { ...base, kind: 'notebook', resources: { migProfile: ['1g.10gb', '2g.20gb', '3g.40gb'][rng.int(3)], gpuModel: 'H100-80GB' } };
      if (r < 0.8) return { ...base, kind: 'notebook', resources: { gpuFraction: [0.25, 0.5][rng.int(2)] } };
      return { ...base, kind: 'vm', resources: { gpus: 1 + rng.int(2) } };
    };
    const submit = async () => {
      const i = submitted++;
      const r = await api('POST', '/v1/jobs', jobBody(i), key, randomUUID());
      // 201, or 200 when a retry (same Idempotency-Key) replays the first answer
      if (r.status === 201 || (r.status === 200 && (r.json as { id?: string } | null)?.id)) {
        const id = (r.json as { id: string }).id;
        if (!accepted.includes(id)) accepted.push(id);
      } else rejected[String(r.status)] = (rejected[String(r.status)] ?? 0) + 1;
    };
    const suspendOne = async () => {
      const running = await db.job.findMany({ where: { state: 'running', kind: { in: ['training', 'notebook', 'vm'] } }, select: { id: true }, take: 20 });
      const j = running[rng.int(Math.max(1, running.length))];
      if (j) await api('POST', `/v1/jobs/${j.id}/suspend`, {});
    };
    const resumeSome = async () => {
      for (const j of await db.job.findMany({ where: { state: 'suspended' }, select: { id: true }, take: 5 })) await api('POST', `/v1/jobs/${j.id}/resume`, {});
    };
    const fault = async (kind: 'xid' | 'node-down') => {
      const ready = await db.node.findMany({ where: { state: 'ready' }, select: { id: true } });
      const n = ready[rng.int(Math.max(1, ready.length))];
      if (!n || ready.length < 10) return;
      await api('POST', '/v1/sim/faults', kind === 'xid' ? { nodeId: n.id, kind, gpuIndex: rng.int(8), xid: 79 } : { nodeId: n.id, kind }, BENCH_ADMIN_KEY);
    };
    const migChange = async () => {
      const g = await db.gpu.findFirst({
        where: {
          schedulable: true,
          migTarget: { equals: Prisma.DbNull },
          allocations: { none: { endedAt: null } },
          node: { state: 'ready', persona: 'container' },
        },
        orderBy: { migChangedAt: { sort: 'asc', nulls: 'first' } },
      });
      if (!g) return;
      const layout =
        g.mode === 'mig'
          ? []
          : [
              { profile: '3g.40gb', start: 0 },
              { profile: '3g.40gb', start: 4 },
            ];
      await api('PUT', `/v1/gpus/${g.id}/mig`, { layout }, BENCH_ADMIN_KEY);
    };
    const personaChange = async () => {
      const idle = await db.node.findMany({
        where: { state: 'ready', gpus: { every: { allocations: { none: { endedAt: null } } } } },
        select: { id: true, persona: true },
        take: 5,
      });
      const n = idle[rng.int(Math.max(1, idle.length))];
      if (n) await api('PUT', `/v1/nodes/${n.id}/persona`, { persona: n.persona === 'vm_passthrough' ? 'container' : 'vm-passthrough' }, BENCH_ADMIN_KEY);
    };
    const background = (async () => {
      let tick = 0;
      while (submitting) {
        tick++;
        await Promise.all([submit(), rng.next() < 0.5 ? submit() : Promise.resolve()]);
        if (tick % 10 === 0) await suspendOne().catch(() => undefined);
        if (tick % 10 === 5) await resumeSome().catch(() => undefined);
        if (tick % 40 === 0) await fault(rng.next() < 0.5 ? 'xid' : 'node-down').catch(() => undefined);
        await sleep(300);
      }
    })();

    // ---- the loop ---------------------------------------------------------------------
    const points: Point[] = [...CRASH_POINTS, 'external'];
    const fired: Record<string, number> = {};
    const notReached: Record<string, number> = {};
    let redisRestarts = 0;
    let postgresRestarts = 0;
    const provoke = async (p: Point) => {
      if (p.startsWith('mig.')) await migChange();
      else if (p.startsWith('persona.')) await personaChange();
      else if (p === 'failover.cordoned' || p === 'failover.requeued') await fault(rng.next() < 0.5 ? 'xid' : 'node-down');
      else if (p === 'failover.remediating') await fault('xid');
      else if (p === 'suspend.checkpointed') await suspendOne();
      else await submit();
    };
    for (let k = 1; k <= o.kills; k++) {
      const p = points[(k - 1) % points.length]!;
      const w: ManagedProcess = s.workers[k % 2]!;
      await w.kill9();
      if (p === 'external') {
        w.start();
        await sleep(500 + rng.int(4000));
        await w.kill9();
        fired.external = (fired.external ?? 0) + 1;
      } else {
        w.start({ GANTRY_CRASH_POINTS: `${p}=1` });
        const end = Date.now() + 45_000;
        let lastProvoke = 0;
        while (w.running && Date.now() < end) {
          if (Date.now() - lastProvoke > 2000) {
            lastProvoke = Date.now();
            await provoke(p).catch(() => undefined);
          }
          await sleep(100);
        }
        if (w.running) {
          await w.kill9();
          notReached[p] = (notReached[p] ?? 0) + 1;
          fired.external = (fired.external ?? 0) + 1;
        } else fired[p] = (fired[p] ?? 0) + 1;
      }
      w.start();
      log(`kill ${k}/${o.kills}: ${p} ${notReached[p] && !fired[p] ? '(not reached)' : ''}; accepted ${accepted.length}`);
      if (k % 10 === 0) {
        await redis.kill();
        await sleep(500);
        await redis.start();
        redisRestarts++;
        log('redis restarted empty');
      }
      if (k % 25 === 0) {
        pg.restartImmediate();
        postgresRestarts++;
        log('postgres restarted (immediate)');
      }
      await sleep(1000 + rng.int(1500));
    }

    // ---- settle ---------------------------------------------------------------------------
    submitting = false;
    await background;
    await resumeSome().catch(() => undefined);
    for (const w of s.workers) if (!w.running) w.start();
    log(`loop done: ${accepted.length} accepted; settling`);
    const settleStart = Date.now();
    let quietSince = 0;
    let settled = false;
    while (Date.now() - settleStart < 4 * 60_000) {
      const [moving, gpusOut, nodesMoving, incidents, suspended] = await Promise.all([
        db.job.count({ where: { state: { in: ['starting', 'running', 'suspending'] } } }),
        db.gpu.count({ where: { OR: [{ schedulable: false }, { migTarget: { not: Prisma.DbNull } }] } }).catch(() => -1),
        db.node.count({ where: { state: { in: ['switching', 'draining', 'down'] } } }),
        db.incident.count({ where: { resolvedAt: null, state: { not: 'failed' } } }),
        db.job.count({ where: { state: 'suspended' } }),
      ]);
      if (suspended) await resumeSome().catch(() => undefined);
      const quiet = moving === 0 && gpusOut === 0 && nodesMoving === 0 && incidents === 0 && suspended === 0;
      if (quiet) {
        quietSince ||= Date.now();
        if (Date.now() - quietSince > 5000) {
          settled = true;
          break;
        }
      } else quietSince = 0;
      if ((Date.now() - settleStart) % 15_000 < 1000)
        log(`settling: ${moving} jobs moving, ${gpusOut} GPUs out, ${nodesMoving} nodes in transition, ${incidents} open incidents, ${suspended} suspended`);
      await sleep(1000);
    }
    const settleSeconds = Math.round((Date.now() - settleStart) / 1000);
    log(`settled=${settled} after ${settleSeconds} s`);
    const final = await checkInvariants(db, { settled: true, graceSeconds: 5 });

    const rows = await db.job.findMany({ select: { id: true, state: true, reasons: true } });
    const byId = new Set(rows.map((r) => r.id));
    const lost = accepted.filter((id) => !byId.has(id));
    const jobs: Record<string, number> = {};
    for (const r of rows) jobs[r.state] = (jobs[r.state] ?? 0) + 1;
    const offenders = rows
      .filter((r) => !['succeeded', 'failed', 'cancelled'].includes(r.state) && !(r.state === 'pending' && Array.isArray(r.reasons) && r.reasons.length > 0))
      .map((r) => ({ id: r.id, state: r.state, reasons: r.reasons }));
    const stuck = await db.gpu.findMany({ where: { schedulable: false }, select: { id: true, migTarget: true } });
    const report: CrashReport = {
      bench: 'crash',
      kills: o.kills,
      gpus,
      fired,
      notReached,
      redisRestarts,
      postgresRestarts,
      postgresRestartsShared: false,
      submitted,
      accepted: accepted.length,
      jobsInDb: rows.length,
      lost,
      jobs,
      offenders: offenders.slice(0, 50),
      stuckGpus: stuck.map((g) => g.id),
      settleSeconds,
      settled,
      violations: final.violations.slice(0, 100),
      seconds: Math.round((Date.now() - t0) / 1000),
      pass: false,
    };
    if (Object.keys(rejected).length) log(`rejected submissions: ${JSON.stringify(rejected)}`);
    report.pass =
      settled && final.violations.length === 0 && offenders.length === 0 && stuck.length === 0 && lost.length === 0 && rows.length === accepted.length;
    return report;
  } finally {
    submitting = false;
    await sys?.stop().catch(() => undefined);
    await db.$disconnect().catch(() => undefined);
    await redis.kill();
    if (!process.env.GANTRY_CRASH_KEEP) pg.destroy();
    else log(`kept postgres at ${pg.dir} (port ${pg.port})`);
  }
}

/** `bench crash`: progress on stderr, one JSON line on stdout, exit 0 on pass. */
export function crashCommand(opts: Record<string, string>, log: (s: string) => void): void {
  runCrash({ kills: Number(opts.kills ?? 50), seed: Number(opts.seed ?? 42) }, log).then(
    (r) => {
      if (opts.json !== 'true') {
        log(
          `crash: ${r.kills} kills (${JSON.stringify(r.fired)}), ${r.redisRestarts} Redis and ${r.postgresRestarts} Postgres restarts; ${r.accepted} jobs accepted, ${r.lost.length} lost, ${r.offenders.length} not settled, ${r.stuckGpus.length} GPUs stuck, ${r.violations.length} violations; settled in ${r.settleSeconds} s: ${r.pass ? 'PASS' : 'FAIL'}`,
        );
      }
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exit(r.pass ? 0 : 1);
    },
    (e: unknown) => {
      process.stderr.write(`crash bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
