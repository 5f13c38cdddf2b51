/**
 * Demand-driven MIG on the real path, wall clock, simulation speed 1: the API and the worker
 * booted in-process (the production HttpModule and WorkerModule, BullMQ on the machine's Redis,
 * a scratch Postgres database) on a simulated cluster of H100-80GB nodes with the driver's
 * default delays (MIG apply 5 s, container start 1 s, model load 3 s). Requests go through HTTP.
 *
 *   pnpm --silent bench mig-latency [--runs 10] [--json]
 *
 * Scenarios, each run `runs` times (p50 / p99 over the runs):
 *  - migJobStart: a 1g.10gb job submitted while no GPU has a free 1g slice; submit (client) to the
 *    job's runningSince. The jobs of earlier runs keep running, so every run re-partitions an idle GPU.
 *  - coldStartRepartition: a new endpoint at zero replicas asking for 3g.40gb while no GPU has one
 *    free; its first invoke, end to end. Earlier runs' replicas keep their slices.
 *  - coldStartExistingSlice: one endpoint (3g.40gb, scale to zero after 1 s) whose slice stays on
 *    its GPU; every run waits for zero replicas, then times one invoke (no MIG change on the path).
 * Each run also records its stages from the database (MIG requested / applied, placement, ready)
 * and whether it took another path (counted as `offPath` and said on stderr).
 */
import { startBenchApi, startBenchWorker } from '@gantry/api/bench-support';
import { createApiKey, createTeam, createTenant, type PrismaClient } from '@gantry/db';
import { generateTopology, SimulatedDriver, topologyCounts } from '@gantry/driver';
import { probeDriver } from './driver-probe';
import { scratchDatabase } from './scratch-db';
import { gpusRegistered, percentile, sleep, until } from './waiting';

const GPU_MODEL = 'H100-80GB';
const SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'cluster:read'];

export interface LatencyFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  runs: number[];
  /** Median of each stage (ms since the request), from the database's timestamps. */
  stagesP50Ms: Record<string, number>;
  /** Runs that took another path than the scenario's (a MIG change too many, or one where none was due). */
  offPath: number;
}

export interface MigLatencyReport {
  bench: 'mig-latency';
  runs: number;
  gpus: number;
  migJobStart: LatencyFigures;
  coldStartRepartition: LatencyFigures;
  coldStartExistingSlice: LatencyFigures;
  targets: { migJobStartMs: number; coldStartRepartitionP99Ms: number; coldStartExistingSliceMs: number };
}

type Stages = Record<string, number>;

type Sample = { ms: number; stages: Stages; offPath?: boolean };

function figures(samples: Sample[]): LatencyFigures {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const names = [...new Set(samples.flatMap((s) => Object.keys(s.stages)))];
  const stagesP50Ms: Record<string, number> = {};
  for (const n of names) {
    const v = samples.map((s) => s.stages[n]).filter((x): x is number => x !== undefined);
    stagesP50Ms[n] = percentile(
      v.sort((a, b) => a - b),
      50,
    );
  }
  return {
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? -1,
    runs: samples.map((s) => s.ms),
    stagesP50Ms,
    offPath: samples.filter((s) => s.offPath).length,
  };
}

/** MIG events since `t0` (one scenario runs at a time), as ms since t0. */
async function migStages(db: PrismaClient, t0: number): Promise<{ stages: Stages; requested: number }> {
  const events = await db.event.findMany({
    where: { type: { in: ['gpu.mig.requested', 'gpu.mig.applied'] }, createdAt: { gte: new Date(t0) } },
    orderBy: { createdAt: 'asc' },
  });
  const stages: Stages = {};
  const req = events.find((e) => e.type === 'gpu.mig.requested');
  const app = events.find((e) => e.type === 'gpu.mig.applied');
  if (req) stages.migRequested = req.createdAt.getTime() - t0;
  if (app) stages.migApplied = app.createdAt.getTime() - t0;
  return { stages, requested: events.filter((e) => e.type === 'gpu.mig.requested').length };
}

export async function runMigLatency(o: { runs: number }, log: (s: string) => void): Promise<MigLatencyReport> {
  const scratch = scratchDatabase('miglat', log);
  // one GPU per run of the first two scenarios, one for the third, and a spare node
  const nodes = Math.ceil((2 * o.runs + 1) / 8) + 1;
  const topology = generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: nodes, gpusPerNode: 8, models: [GPU_MODEL] });
  const driver = new SimulatedDriver({ topology, speed: 1 });
  const probe = probeDriver(driver);
  const env = { DATABASE_URL: scratch.url, GANTRY_QUEUE_PREFIX: `gantry-bench-${scratch.id}`, GANTRY_SIM_SPEED: '1' };
  let w: Awaited<ReturnType<typeof startBenchWorker>> | undefined;
  let api: Awaited<ReturnType<typeof startBenchApi>> | undefined;
  try {
    w = await startBenchWorker({ driver, env });
    api = await startBenchApi({ env });
    const db = w.db;
    const gpus = await gpusRegistered(db, topologyCounts(topology).gpus);
    log(`cluster: ${nodes} nodes, ${gpus} ${GPU_MODEL} GPUs; API ${api.url}`);
    const tenant = await createTenant(db, { name: 'bench', slug: `bench-${scratch.id.replace(/_/g, '-')}` });
    const team = await createTeam(db, tenant.id, { name: 'bench', slug: 'bench', quota: { guaranteed: gpus, limit: gpus } });
    const { key } = await createApiKey(db, { name: 'bench', role: 'member', tenantId: tenant.id, teamId: team.id, scopes: SCOPES });
    const url = api.url;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    const settle = () => sleep(500);

    // (a) a 1g job on a cluster with no free 1g slice
    const a: Sample[] = [];
    for (let i = 0; i < o.runs; i++) {
      await settle();
      const t0 = Date.now();
      const job = await call('POST', '/v1/jobs', {
        teamId: team.id,
        name: `mig-latency-${i}`,
        kind: 'notebook',
        resources: { migProfile: '1g.10gb', gpuModel: GPU_MODEL },
        simulation: { durationSeconds: 36_000 },
      });
      const row = await until(() => db.job.findFirst({ where: { id: job.id, runningSince: { not: null } } }), 60_000, 10);
      const ms = row.runningSince!.getTime() - t0;
      const { stages, requested } = await migStages(db, t0);
      const applyCalled = probe.migApplyCalledAt(t0);
      if (applyCalled) stages.driverMigApply = applyCalled - t0;
      const started = probe.startedAt(job.id);
      if (started) stages.driverStart = started - t0;
      if (requested !== 1) log(`migJobStart run ${i + 1}: expected one MIG change, saw ${requested}`);
      const alloc = await db.allocation.findFirst({ where: { jobId: job.id } });
      if (alloc) stages.placed = alloc.startedAt.getTime() - t0;
      stages.running = ms;
      a.push({ ms, stages, offPath: requested !== 1 });
      log(`migJobStart ${i + 1}/${o.runs}: running after ${ms} ms (${fmt(stages)})`);
    }

    const endpoint = (name: string, scaleToZeroAfterSeconds: number) =>
      call('POST', '/v1/endpoints', {
        teamId: team.id,
        name,
        model: 'bench-model',
        resources: { migProfile: '3g.40gb', gpuModel: GPU_MODEL },
        minReplicas: 0,
        maxReplicas: 1,
        scaleToZeroAfterSeconds,
      }) as Promise<{ id: string }>;
    const invoke = async (id: string, what: string) => {
      const t0 = Date.now();
      const r = await call('POST', `/v1/endpoints/${id}/invoke`, { input: what });
      const ms = Date.now() - t0;
      if (!r.coldStart) throw new Error(`${what}: not a cold start`);
      const rep = await db.endpointReplica.findFirst({ where: { endpointId: id }, orderBy: { createdAt: 'desc' } });
      const alloc = await db.allocation.findFirst({ where: { endpointId: id }, orderBy: { startedAt: 'desc' }, include: { node: true, gpu: true } });
      const stages: Stages = {};
      if (rep) {
        stages.placed = rep.createdAt.getTime() - t0;
        const started = probe.startedAt(rep.id);
        if (started) stages.driverStart = started - t0;
        if (rep.readyAt) stages.ready = rep.readyAt.getTime() - t0;
      }
      stages.answered = ms;
      return { t0, ms, stages, where: alloc ? `${alloc.node.name} GPU ${alloc.gpu.index}` : '?' };
    };

    // (b) an endpoint at zero whose 3g slice no GPU has free
    const b: Sample[] = [];
    for (let i = 0; i < o.runs; i++) {
      await settle();
      const ep = await endpoint(`repartition-${i}`, 3600);
      const r = await invoke(ep.id, `repartition ${i}`);
      const mig = await migStages(db, r.t0);
      const applyCalled = probe.migApplyCalledAt(r.t0);
      if (applyCalled) mig.stages.driverMigApply = applyCalled - r.t0;
      if (mig.requested !== 1) log(`coldStartRepartition run ${i + 1}: expected one MIG change, saw ${mig.requested}`);
      const stages = { ...mig.stages, ...r.stages };
      b.push({ ms: r.ms, stages, offPath: mig.requested !== 1 });
      log(`coldStartRepartition ${i + 1}/${o.runs}: answered after ${r.ms} ms on ${r.where} (${fmt(stages)})`);
    }

    // (c) an endpoint at zero whose slice exists on its GPU
    const c: Sample[] = [];
    const ep = await endpoint('existing-slice', 1);
    await invoke(ep.id, 'first (creates the slice)');
    for (let i = 0; i < o.runs; i++) {
      await until(
        async () => {
          const d = await call('GET', `/v1/endpoints/${ep.id}`);
          return d.replicas.ready === 0 && d.replicas.starting === 0;
        },
        60_000,
        100,
      );
      await settle();
      const r = await invoke(ep.id, `existing slice ${i}`);
      const mig = await migStages(db, r.t0);
      if (mig.requested !== 0) log(`coldStartExistingSlice run ${i + 1}: a MIG change happened on the path`);
      c.push({ ms: r.ms, stages: r.stages, offPath: mig.requested !== 0 });
      log(`coldStartExistingSlice ${i + 1}/${o.runs}: answered after ${r.ms} ms on ${r.where} (${fmt(r.stages)})`);
    }

    return {
      bench: 'mig-latency',
      runs: o.runs,
      gpus,
      migJobStart: figures(a),
      coldStartRepartition: figures(b),
      coldStartExistingSlice: figures(c),
      targets: { migJobStartMs: 7000, coldStartRepartitionP99Ms: 10_000, coldStartExistingSliceMs: 3500 },
    };
  } finally {
    await api?.close().catch((e: unknown) => log(`closing the API: ${String(e)}`));
    await w?.close().catch((e: unknown) => log(`closing the worker: ${String(e)}`));
    await driver.close();
    scratch.drop();
  }
}

const fmt = (s: Stages) =>
  Object.entries(s)
    .sort((x, y) => x[1] - y[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** CLI entry: progress on stderr, one JSON line on stdout. */
export function migLatencyCommand(opts: Record<string, string>): void {
  const runs = Number(opts.runs ?? 10);
  if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
    process.stderr.write('usage: bench mig-latency [--runs 10] [--json]   (runs: 1 to 100)\n');
    process.exitCode = 2;
    return;
  }
  const t0 = Date.now();
  runMigLatency({ runs }, (s) => process.stderr.write(s + '\n')).then(
    (r) => {
      for (const k of ['migJobStart', 'coldStartRepartition', 'coldStartExistingSlice'] as const) {
        process.stderr.write(`${k}: p50 ${r[k].p50Ms} ms, p99 ${r[k].p99Ms} ms; stages p50 ${fmt(r[k].stagesP50Ms)}\n`);
      }
      process.stderr.write(`${Math.round((Date.now() - t0) / 1000)} s in all\n`);
      const line = {
        bench: r.bench,
        runs: r.runs,
        gpus: r.gpus,
        migJobStart: r.migJobStart,
        coldStartRepartition: r.coldStartRepartition,
        coldStartExistingSlice: r.coldStartExistingSlice,
        targets: r.targets,
      };
      process.stdout.write(JSON.stringify(line) + '\n');
      process.exit(0);
    },
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
