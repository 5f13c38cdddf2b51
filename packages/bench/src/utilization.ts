/**
 * Utilization query benchmark: 30 days of 1-hour usage rollups for 8,000 GPUs
 * (1,000 nodes x 8, 20 tenants x 5 teams, every node shared by up to two teams an hour) are
 * generated into a scratch database; then `GET /v1/utilization` is answered by the real
 * UtilizationService for each groupBy, as the platform admin and as one tenant. Median and
 * p95 of N runs after a warm-up; the target is under 500 ms for a 30-day query.
 *
 *   pnpm --silent bench utilization [--runs 7] [--days 30] [--nodes 1000] [--keep] [--json]
 *
 * The scratch database is dropped at the end.
 */
import { scratchDatabase } from './scratch-db';
import { parseConfig, PrismaService, UtilizationRepository, UtilizationService, type Principal } from '@gantry/api/bench-support';

export interface UtilizationBenchReport {
  bench: 'utilization';
  gpus: number;
  nodes: number;
  teams: number;
  days: number;
  rollupRows: number;
  tableMiB: number;
  generateSeconds: number;
  queries: {
    name: string;
    groupBy: string;
    step: string;
    caller: string;
    series: number;
    points: number;
    medianMs: number;
    p95Ms: number;
    queryMs: number;
    pass: boolean;
  }[];
  worstMedianMs: number;
  /** Queries whose median is under 500 ms. */
  passed: number;
  pass: boolean;
}

const TENANTS = 20;
const TEAMS_PER_TENANT = 5;

export async function runUtilizationBench(
  o: { runs: number; days: number; nodes: number; keep?: boolean },
  log: (s: string) => void,
): Promise<UtilizationBenchReport> {
  const scratch = scratchDatabase('util', log);

  const config = parseConfig({ ...process.env, DATABASE_URL: scratch.url });
  const ps = new PrismaService(config);
  const db = ps.client;
  try {
    const t0 = performance.now();
    const now = new Date();
    const end = new Date(Math.floor(now.getTime() / 3600_000) * 3600_000);
    const hours = o.days * 24;
    // Inventory and tenancy (names for the answer's labels).
    await db.$executeRawUnsafe(`INSERT INTO "Spine" (id, name) VALUES ('s0', 'spine-0')`);
    await db.$executeRawUnsafe(`INSERT INTO "Leaf" (id, name, "spineId") VALUES ('l0', 'leaf-0', 's0')`);
    await db.$executeRawUnsafe(
      `INSERT INTO "Node" (id, name, "leafId", "cpuMilli", "memoryMiB") SELECT 'n' || n, 'node-' || n, 'l0', 128000, 1048576 FROM generate_series(0, ${o.nodes - 1}) n`,
    );
    await db.$executeRawUnsafe(
      `INSERT INTO "Tenant" (id, name, slug) SELECT 't' || t, 'Tenant ' || t, 'tenant-' || t FROM generate_series(0, ${TENANTS - 1}) t`,
    );
    await db.$executeRawUnsafe(
      `INSERT INTO "Team" (id, "tenantId", name, slug) SELECT 'team' || k, 't' || (k / ${TEAMS_PER_TENANT}), 'Team ' || k, 'team-' || k FROM generate_series(0, ${TENANTS * TEAMS_PER_TENANT - 1}) k`,
    );
    // Hour rollups: per node and hour, the capacity row (8 GPUs) and up to two holders.
    // Node n is H100 when even, A100 when odd; its main team holds 4-8 GPUs, a second team
    // borrows 0-4 GPUs in some hours; SM activity 20-95 % of what is held.
    const teams = TENANTS * TEAMS_PER_TENANT;
    await db.$executeRawUnsafe(`
      INSERT INTO "UsageRollup" ("stepSeconds", bucket, "nodeId", "gpuModel", "tenantId", "teamId", "capacitySeconds", "allocatedSeconds", "busySeconds", "memoryMiBSeconds", "energyJoules")
      SELECT 3600, b, 'n' || n, CASE WHEN n % 2 = 0 THEN 'H100-80GB' ELSE 'A100-80GB' END, '', '', 8 * 3600, 0, 0, 0, (8 - x.held) * 3600 * 70
      FROM generate_series(0, ${o.nodes - 1}) n,
           generate_series(timestamp '${iso(end)}' - interval '${hours} hours', timestamp '${iso(end)}' - interval '1 hour', interval '1 hour') b,
           LATERAL (SELECT (4 + (n + extract(hour from b)::int) % 5) + ((n * 7 + extract(doy from b)::int) % 5) AS held) x`);
    await db.$executeRawUnsafe(`
      INSERT INTO "UsageRollup" ("stepSeconds", bucket, "nodeId", "gpuModel", "tenantId", "teamId", "capacitySeconds", "allocatedSeconds", "busySeconds", "memoryMiBSeconds", "energyJoules")
      SELECT 3600, b, 'n' || n, CASE WHEN n % 2 = 0 THEN 'H100-80GB' ELSE 'A100-80GB' END,
             't' || (tm / ${TEAMS_PER_TENANT}), 'team' || tm, 0, g * 3600, g * 3600 * u, g * 3600 * 60000 * u, g * 3600 * (70 + 630 * u)
      FROM generate_series(0, ${o.nodes - 1}) n,
           generate_series(timestamp '${iso(end)}' - interval '${hours} hours', timestamp '${iso(end)}' - interval '1 hour', interval '1 hour') b,
           LATERAL (VALUES (n % ${teams}, (4 + (n + extract(hour from b)::int) % 5)::float8),
                           ((n * 13 + 1) % ${teams}, ((n * 7 + extract(doy from b)::int) % 5)::float8)) AS h(tm, g),
           LATERAL (SELECT 0.2 + 0.75 * ((n * 31 + extract(hour from b)::int * 17) % 100) / 100.0 AS u) x
      WHERE g > 0`);
    // The rows that sum every node (nodeId ''), then day rollups, as the telemetry tick writes them.
    const sumCols = `sum("capacitySeconds"), sum("allocatedSeconds"), sum("busySeconds"), sum("memoryMiBSeconds"), sum("energyJoules")`;
    const cols = `("stepSeconds", bucket, "nodeId", "gpuModel", "tenantId", "teamId", "capacitySeconds", "allocatedSeconds", "busySeconds", "memoryMiBSeconds", "energyJoules")`;
    await db.$executeRawUnsafe(
      `INSERT INTO "UsageRollup" ${cols} SELECT 3600, bucket, '', "gpuModel", "tenantId", "teamId", ${sumCols} FROM "UsageRollup" WHERE "stepSeconds" = 3600 GROUP BY 2, 4, 5, 6`,
    );
    await db.$executeRawUnsafe(
      `INSERT INTO "UsageRollup" ${cols} SELECT 86400, date_trunc('day', bucket), "nodeId", "gpuModel", "tenantId", "teamId", ${sumCols} FROM "UsageRollup" WHERE "stepSeconds" = 3600 GROUP BY 2, 3, 4, 5, 6`,
    );
    await db.$executeRawUnsafe(`ANALYZE "UsageRollup"`);
    const rollupRows = Number((await db.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "UsageRollup"`))[0]!.n);
    const bytes = Number((await db.$queryRawUnsafe<{ b: bigint }[]>(`SELECT pg_total_relation_size('"UsageRollup"') AS b`))[0]!.b);
    const generateSeconds = Math.round((performance.now() - t0) / 100) / 10;
    log(
      `generated ${rollupRows.toLocaleString()} rollup rows (hour and day, per node and summed) (${o.nodes * 8} GPUs, ${o.days} days, ${(bytes / 2 ** 20).toFixed(0)} MiB with indexes) in ${generateSeconds} s`,
    );

    const repo = new UtilizationRepository(ps);
    const svc = new UtilizationService(repo, config);
    const admin: Principal = { keyId: 'bench', name: 'bench', role: 'platform-admin', scopes: [], tenantId: null, teamId: null };
    const tenant: Principal = { keyId: 'bench', name: 'bench', role: 'tenant-admin', scopes: [], tenantId: 't3', teamId: null };
    const from = new Date(end.getTime() - hours * 3600_000).toISOString();
    const cases: { name: string; groupBy: 'team' | 'gpuModel' | 'node' | 'tenant'; step: number; p: Principal; caller: string }[] = [
      { name: `${o.days} d by team, 6-hourly (operator; the console's 30-day view)`, groupBy: 'team', step: 6 * 3600, p: admin, caller: 'platform-admin' },
      { name: `${o.days} d by team, daily (operator)`, groupBy: 'team', step: 86400, p: admin, caller: 'platform-admin' },
      { name: `${o.days} d by team, hourly (operator)`, groupBy: 'team', step: 3600, p: admin, caller: 'platform-admin' },
      { name: `${o.days} d by GPU model, hourly (operator)`, groupBy: 'gpuModel', step: 3600, p: admin, caller: 'platform-admin' },
      { name: `${o.days} d by tenant, hourly (operator)`, groupBy: 'tenant', step: 3600, p: admin, caller: 'platform-admin' },
      { name: `${o.days} d by node, daily (operator)`, groupBy: 'node', step: 86400, p: admin, caller: 'platform-admin' },
      { name: `${o.days} d by team, hourly (one tenant)`, groupBy: 'team', step: 3600, p: tenant, caller: 'tenant-admin' },
    ];
    const queries: UtilizationBenchReport['queries'] = [];
    for (const c of cases) {
      const q = { groupBy: c.groupBy, from, to: end.toISOString(), step: c.step };
      const r = await svc.report(c.p, q, now); // warm-up
      const ms: number[] = [];
      for (let i = 0; i < o.runs; i++) {
        const s = performance.now();
        await svc.report(c.p, q, now);
        ms.push(performance.now() - s);
      }
      ms.sort((a, b) => a - b);
      // The rollup query alone (Postgres + decoding), without building the answer.
      const w = { from: new Date(from), to: end, stepSeconds: c.step, rollupSeconds: (c.step % 86400 === 0 ? 86400 : 3600) as 3600 | 86400 };
      const dbMs: number[] = [];
      for (let i = 0; i < Math.min(3, o.runs); i++) {
        const s = performance.now();
        await repo.usage(c.p.tenantId ? { kind: 'tenant', tenantId: c.p.tenantId, teamId: null } : { kind: 'platform' }, { groupBy: c.groupBy, ...w });
        dbMs.push(performance.now() - s);
      }
      dbMs.sort((a, b) => a - b);
      const row = {
        name: c.name,
        groupBy: c.groupBy,
        step: c.step % 86400 === 0 ? `${c.step / 86400}d` : `${c.step / 3600}h`,
        caller: c.caller,
        series: r.series.length,
        points: r.series.reduce((n, s) => n + s.points.length, 0),
        medianMs: Math.round(ms[Math.floor(ms.length / 2)]!),
        p95Ms: Math.round(ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)]!),
        queryMs: Math.round(dbMs[Math.floor(dbMs.length / 2)]!),
        pass: false,
      };
      row.pass = row.medianMs < 500;
      queries.push(row);
      log(
        `${row.name}: ${row.series} series x ${row.points / Math.max(1, row.series)} points, median ${row.medianMs} ms, p95 ${row.p95Ms} ms (rollup query alone ${row.queryMs} ms) ${row.pass ? 'PASS' : 'FAIL'}`,
      );
    }
    const worstMedianMs = Math.max(...queries.map((q) => q.medianMs));
    return {
      bench: 'utilization',
      gpus: o.nodes * 8,
      nodes: o.nodes,
      teams,
      days: o.days,
      rollupRows,
      tableMiB: Math.round(bytes / 2 ** 20),
      generateSeconds,
      queries,
      worstMedianMs,
      passed: queries.filter((q) => q.pass).length,
      pass: queries.every((q) => q.pass),
    };
  } finally {
    await ps.onApplicationShutdown();
    if (o.keep) log(`kept ${scratch.url} (--keep): drop it with DATABASE_URL=... node prisma/scripts/database.cjs drop`);
    else scratch.drop();
  }
}

function iso(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

/** `bench utilization`: progress on stderr, one JSON line on stdout. */
export function utilizationCommand(opts: Record<string, string>, log: (s: string) => void): void {
  runUtilizationBench({ runs: Number(opts.runs ?? 7), days: Number(opts.days ?? 30), nodes: Number(opts.nodes ?? 1000), keep: opts.keep === 'true' }, log).then(
    (r) => {
      if (opts.json !== 'true')
        log(
          `utilization: ${r.gpus} GPUs, ${r.days} days, ${r.rollupRows} rollup rows: ${r.passed} of ${r.queries.length} queries under 500 ms (worst median ${r.worstMedianMs} ms)`,
        );
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exitCode = 0;
    },
    (e: unknown) => {
      process.stderr.write(`utilization bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
