/**
 * Snapshot: the scheduling cycle's step 1 (the cluster as the engine sees it) on a cluster of
 * `nodes` nodes of 8 GPUs with `allocations` active allocations, in a scratch database.
 *
 *   pnpm --silent bench snapshot [--nodes 10000] [--allocations 5000] [--changes 200] [--reads 20] [--json]
 *
 * Before: every cycle read the whole cluster (`ClusterRepository.allNodes`, `full*`). After: the
 * worker keeps it and reads the nodes the change log names (`IncrementalSnapshot.read`,
 * `incremental*`) after `changes` allocations released and `changes` placed by "another worker"
 * between two reads. Both are then turned into the engine's snapshot (`buildSnapshot`, `build*`).
 */
import { buildSnapshot, ClusterRepository, IncrementalSnapshot, nodeWithGpus, parseConfig, PrismaService } from '@gantry/api/bench-support';
import { scratchDatabase } from './scratch-db';
import { percentile as pct } from './waiting';

export interface SnapshotBenchReport {
  bench: 'snapshot';
  nodes: number;
  gpus: number;
  allocations: number;
  changes: number;
  reads: number;
  /** The read of main before round 3 (one findMany with the nested include): its time, or why it failed. */
  oneQueryRead: { ms: number } | { error: string };
  fullReadP50Ms: number;
  fullReadMaxMs: number;
  incrementalReadP50Ms: number;
  incrementalReadP99Ms: number;
  nodesReadAgainP50: number;
  buildP50Ms: number;
  rssMB: number;
}

export async function runSnapshotBench(
  o: { nodes: number; allocations: number; changes: number; reads: number },
  log: (s: string) => void,
): Promise<SnapshotBenchReport> {
  const scratch = scratchDatabase('snapshot', log);
  const ps = new PrismaService(parseConfig({ ...process.env, DATABASE_URL: scratch.url }));
  const db = ps.client;
  try {
    const leaves = Math.ceil(o.nodes / 32);
    await db.$executeRawUnsafe(`INSERT INTO "Tenant" (id, name, slug) VALUES ('t0', 'Tenant 0', 'tenant-0')`);
    await db.$executeRawUnsafe(`INSERT INTO "Team" (id, "tenantId", name, slug) VALUES ('team0', 't0', 'Team 0', 'team-0')`);
    await db.$executeRawUnsafe(`INSERT INTO "Spine" (id, name) VALUES ('s0', 'spine-0'), ('s1', 'spine-1')`);
    await db.$executeRawUnsafe(
      `INSERT INTO "Leaf" (id, name, "spineId") SELECT 'l' || i, 'leaf-' || i, 's' || (i % 2) FROM generate_series(0, ${leaves - 1}) i`,
    );
    await db.$executeRawUnsafe(
      `INSERT INTO "Node" (id, name, "leafId", "cpuMilli", "memoryMiB") SELECT 'n' || i, 'node-' || lpad(i::text, 5, '0'), 'l' || (i / 32), 224000, 2097152 FROM generate_series(0, ${o.nodes - 1}) i`,
    );
    await db.$executeRawUnsafe(
      `INSERT INTO "Gpu" (id, "nodeId", index, model, "memoryMiB") SELECT 'n' || i || '-g' || g, 'n' || i, g, CASE WHEN i % 4 = 3 THEN 'A100-80GB' ELSE 'H100-80GB' END, 81920 FROM generate_series(0, ${o.nodes - 1}) i, generate_series(0, 7) g`,
    );
    const place = (n: number) =>
      db.$executeRawUnsafe(
        `INSERT INTO "Allocation" (id, "tenantId", "teamId", replica, "nodeId", "gpuId", "gpuModel", milli, "gpuUnits", "activeSlot")
         SELECT 'a' || gen_random_uuid(), 't0', 'team0', 0, g."nodeId", g.id, g.model, 1000, 1, g.id || ':whole'
         FROM (SELECT id, "nodeId", model FROM "Gpu" g WHERE NOT EXISTS (SELECT 1 FROM "Allocation" x WHERE x."gpuId" = g.id AND x."endedAt" IS NULL) ORDER BY random() LIMIT ${n}) g`,
      );
    const release = (n: number) =>
      db.$executeRawUnsafe(
        `UPDATE "Allocation" a SET "endedAt" = now(), "activeSlot" = NULL FROM (SELECT id FROM "Allocation" WHERE "endedAt" IS NULL ORDER BY random() LIMIT ${n}) r WHERE a.id = r.id`,
      );
    await place(o.allocations);
    const gpus = await db.gpu.count();
    log(`${o.nodes} nodes, ${gpus} GPUs, ${o.allocations} active allocations; ${o.reads} reads, ${o.changes} releases and ${o.changes} placements between two`);

    const repo = new ClusterRepository(ps);
    let oneQueryRead: SnapshotBenchReport['oneQueryRead'];
    const t00 = performance.now();
    try {
      await db.node.findMany({ include: nodeWithGpus, orderBy: { name: 'asc' } });
      oneQueryRead = { ms: Math.round(performance.now() - t00) };
    } catch (e) {
      oneQueryRead = { error: (e instanceof Error ? e.message : String(e)).split('\n').pop()!.slice(0, 200) };
    }
    const full: number[] = [];
    const build: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const rows = await repo.allNodes();
      full.push(performance.now() - t0);
      const t1 = performance.now();
      buildSnapshot(rows);
      build.push(performance.now() - t1);
    }
    const snapshot = new IncrementalSnapshot(repo);
    await snapshot.read();
    const incremental: number[] = [];
    const reread: number[] = [];
    for (let i = 0; i < o.reads; i++) {
      await release(o.changes);
      await place(o.changes);
      const t0 = performance.now();
      const r = await snapshot.read();
      incremental.push(performance.now() - t0);
      reread.push(r.reread);
      if (r.nodes.length !== o.nodes) throw new Error(`snapshot has ${r.nodes.length} nodes, not ${o.nodes}`);
    }
    // the kept snapshot is the database's: every active allocation, no released one
    const kept = (await snapshot.read()).nodes.reduce((s, n) => s + n.gpus.reduce((k, g) => k + g.allocations.length, 0), 0);
    const active = await db.allocation.count({ where: { endedAt: null } });
    if (kept !== active) throw new Error(`the kept snapshot holds ${kept} allocations, the database ${active}`);
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const r0 = (n: number) => Math.round(n);
    return {
      bench: 'snapshot',
      nodes: o.nodes,
      gpus,
      allocations: o.allocations,
      changes: o.changes,
      reads: o.reads,
      oneQueryRead,
      fullReadP50Ms: r0(pct(sorted(full), 50)),
      fullReadMaxMs: r0(Math.max(...full)),
      incrementalReadP50Ms: r0(pct(sorted(incremental), 50)),
      incrementalReadP99Ms: r0(pct(sorted(incremental), 99)),
      nodesReadAgainP50: pct(sorted(reread), 50),
      buildP50Ms: r0(pct(sorted(build), 50)),
      rssMB: Math.round(process.memoryUsage().rss / 2 ** 20),
    };
  } finally {
    await ps.client.$disconnect();
    scratch.drop();
  }
}

/** `bench snapshot`: progress on stderr, one JSON line on stdout. */
export function snapshotCommand(opts: Record<string, string>, log: (s: string) => void): void {
  runSnapshotBench(
    {
      nodes: Number(opts.nodes ?? 10000),
      allocations: Number(opts.allocations ?? 5000),
      changes: Number(opts.changes ?? 200),
      reads: Number(opts.reads ?? 20),
    },
    log,
  ).then(
    (r) => {
      if (opts.json !== 'true')
        log(
          `snapshot: one-query read ${'ms' in r.oneQueryRead ? `${r.oneQueryRead.ms} ms` : `failed (${r.oneQueryRead.error})`}; paged full read p50 ${r.fullReadP50Ms} ms (max ${r.fullReadMaxMs}); incremental read p50 ${r.incrementalReadP50Ms} ms, p99 ${r.incrementalReadP99Ms} ms (${r.nodesReadAgainP50} nodes read again); build ${r.buildP50Ms} ms`,
        );
      process.stdout.write(JSON.stringify(r) + '\n');
    },
    (e: unknown) => {
      log(`snapshot bench failed: ${e instanceof Error ? e.message : String(e)}`);
      process.exitCode = 1;
    },
  );
}
