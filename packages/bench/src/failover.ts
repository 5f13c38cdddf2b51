/**
 * Failover benchmark: on a 1,000-node simulated cluster (5 spines x 10 leaves x 20
 * nodes x 8 GPUs) with every driver delay at zero, a node runs 8 jobs; `node-down` is injected;
 * measured: detection (the driver's node-down event, the incident's detectedAt) -> every one of
 * the 8 jobs running again on other nodes (the latest runningSince). p50 / p99 over N trials.
 *
 *   pnpm --silent bench failover [--trials 50] [--json] [--burn-in-seconds 10] [--leaves 10]
 *
 * `--burn-in-seconds N`: the repaired node runs a burn-in under load of N seconds before it is
 * uncordoned (GANTRY_BURN_IN); without it the idle check alone closes the incident. The MTTR
 * with and without is in docs/benchmarks-failover.md. `--leaves`: leaf switches per spine (20 nodes each).
 *
 * Boots the real worker (WorkerModule: failover, scheduling cycle, lifecycle, BullMQ on the
 * machine's Redis) in-process against a scratch database made and dropped for the run.
 */
import { scratchDatabase } from './scratch-db';
import { percentile as pct, until as untilEvery } from './waiting';

/** Polls every 20 ms: failover is timed in milliseconds. */
const until = <T>(fn: () => Promise<T | undefined | null | false>, ms: number, every = 20) => untilEvery(fn, ms, every);
import { startBenchWorker } from '@gantry/api/bench-support';
import { createTeam, createTenant } from '@gantry/db';
import { generateTopology, SimulatedDriver, topologyCounts } from '@gantry/driver';

export interface FailoverReport {
  bench: 'failover';
  nodes: number;
  gpus: number;
  trials: number;
  jobsPerNode: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  /** Detection -> the 8 jobs back in the queue (incident step `rescheduled`). */
  requeueP50Ms: number;
  /** Detection -> incident resolved (node rebooted with zero delay, validated, burn-in when on, uncordoned). */
  mttrP50Ms: number;
  mttrP99Ms: number;
  /** Length of the burn-in under load before uncordon; 0 = off (idle check only). */
  burnInSeconds: number;
  targets: { p50Ms: number; p99Ms: number };
  pass: boolean;
}

export async function runFailover(o: { trials: number; burnInSeconds?: number; leavesPerSpine?: number }, log: (s: string) => void): Promise<FailoverReport> {
  const burnInSeconds = o.burnInSeconds ?? 0;
  const scratch = scratchDatabase('failover', log);
  const { id } = scratch;

  const topology = generateTopology({
    spines: 5,
    leavesPerSpine: o.leavesPerSpine ?? 10,
    nodesPerLeaf: 20,
    gpusPerNode: 8,
    models: ['H100-80GB', 'A100-80GB'],
  });
  const driver = new SimulatedDriver({
    topology,
    speed: 1,
    heartbeats: true,
    delays: { migApplySeconds: 0, personaSwitchSeconds: 0, startSeconds: 0, suspendSeconds: 0, gpuResetSeconds: 0, rebootSeconds: 0, heartbeatSeconds: 5 },
  });
  let w: Awaited<ReturnType<typeof startBenchWorker>> | undefined;
  try {
    w = await startBenchWorker({
      driver,
      env: {
        DATABASE_URL: scratch.url,
        GANTRY_QUEUE_PREFIX: `gantry-bench-${id}`,
        GANTRY_SIM_SPEED: '1',
        GANTRY_RECONCILE_SECONDS: '5',
        GANTRY_BURN_IN: burnInSeconds > 0 ? 'true' : 'false',
        ...(burnInSeconds > 0 ? { GANTRY_BURN_IN_SECONDS: String(burnInSeconds) } : {}),
      },
    });
    const db = w.db;
    const gpus = await until(
      async () => {
        const n = await db.gpu.count();
        return n >= topologyCounts(topology).gpus ? n : undefined;
      },
      120_000,
      200,
    );
    const nodes = await db.node.findMany({ orderBy: { name: 'asc' }, include: { gpus: { orderBy: { index: 'asc' } } } });
    log(`cluster: ${nodes.length} nodes, ${gpus} GPUs`);
    const tenant = await createTenant(db, { name: 'bench', slug: `bench-${id.replace(/_/g, '-')}` });
    const team = await createTeam(db, tenant.id, { name: 'bench', slug: 'bench', quota: { guaranteed: gpus, limit: gpus } });

    const latencies: number[] = [];
    const requeues: number[] = [];
    const mttrs: number[] = [];
    for (let t = 0; t < o.trials; t++) {
      // a node of its own per trial, spread over the cluster, idle and ready (moved jobs land anywhere)
      let node = nodes[(t * 37) % nodes.length]!;
      for (
        let k = 1;
        (await db.allocation.count({ where: { nodeId: node.id, endedAt: null } })) > 0 ||
        (await db.node.findUniqueOrThrow({ where: { id: node.id } })).state !== 'ready';
        k++
      ) {
        node = nodes[(t * 37 + k * 11) % nodes.length]!;
      }
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) {
        const gpu = node.gpus[i]!;
        ids.push(
          await w!.placeNew({ tenantId: tenant.id, teamId: team.id, name: `failover-${t}-${i}`, gpuModel: gpu.model }, [{ nodeId: node.id, gpuId: gpu.id }]),
        );
      }
      await until(async () => (await db.job.count({ where: { id: { in: ids }, state: 'running' } })) === 8, 30_000);

      await driver.injectFault({ nodeName: node.name, kind: 'node-down' });
      const back = await until(
        async () => {
          const rows = await db.job.findMany({
            where: { id: { in: ids } },
            select: { state: true, runningSince: true, allocations: { where: { endedAt: null }, select: { nodeId: true } } },
          });
          const ok = rows.every((r) => r.state === 'running' && r.runningSince && r.allocations.length > 0 && r.allocations.every((a) => a.nodeId !== node.id));
          return ok ? rows : undefined;
        },
        60_000,
        10,
      );
      const incident = await until(() => db.incident.findFirst({ where: { nodeId: node.id, kind: 'node-down' }, orderBy: { detectedAt: 'desc' } }), 10_000);
      const detected = incident.detectedAt.getTime();
      const latest = Math.max(...back.map((r) => r.runningSince!.getTime()));
      latencies.push(latest - detected);
      const steps = (incident.timeline as { at: string; step: string }[]) ?? [];
      const requeued = steps.find((s) => s.step === 'rescheduled');
      if (requeued) requeues.push(new Date(requeued.at).getTime() - detected);
      const resolved = await until(() => db.incident.findFirst({ where: { id: incident.id, resolvedAt: { not: null } } }), 30_000 + 3000 * burnInSeconds);
      mttrs.push(resolved.resolvedAt!.getTime() - detected);
      log(
        `trial ${t + 1}/${o.trials}: ${node.name}: 8 jobs running elsewhere ${latest - detected} ms after detection; requeued at ${requeued ? new Date(requeued.at).getTime() - detected : '?'} ms; MTTR ${resolved.resolvedAt!.getTime() - detected} ms`,
      );
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const report: FailoverReport = {
      bench: 'failover',
      nodes: nodes.length,
      gpus,
      trials: o.trials,
      jobsPerNode: 8,
      p50Ms: pct(sorted, 50),
      p99Ms: pct(sorted, 99),
      meanMs: Math.round(latencies.reduce((s, x) => s + x, 0) / latencies.length),
      maxMs: sorted[sorted.length - 1]!,
      requeueP50Ms: requeues.length
        ? pct(
            [...requeues].sort((a, b) => a - b),
            50,
          )
        : -1,
      mttrP50Ms: pct(
        [...mttrs].sort((a, b) => a - b),
        50,
      ),
      mttrP99Ms: pct(
        [...mttrs].sort((a, b) => a - b),
        99,
      ),
      burnInSeconds,
      targets: { p50Ms: 2000, p99Ms: 5000 },
      pass: false,
    };
    report.pass = report.p50Ms < 2000 && report.p99Ms < 5000;
    return report;
  } finally {
    await w?.close();
    await driver.close();
    scratch.drop();
  }
}

/** `bench failover`: prints progress on stderr and one JSON line on stdout. */
export function failoverCommand(opts: Record<string, string>, log: (s: string) => void): void {
  runFailover(
    { trials: Number(opts.trials ?? 50), burnInSeconds: Number(opts['burn-in-seconds'] ?? 0), leavesPerSpine: opts.leaves ? Number(opts.leaves) : undefined },
    log,
  ).then(
    (r) => {
      if (opts.json !== 'true')
        log(
          `failover on ${r.nodes} nodes: detection -> 8 jobs running elsewhere p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms (targets < 2000 / < 5000 ms): ${r.pass ? 'PASS' : 'FAIL'}; MTTR p50 ${r.mttrP50Ms} ms (burn-in ${r.burnInSeconds ? `${r.burnInSeconds} s` : 'off'})`,
        );
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exit(0);
    },
    (e: unknown) => {
      process.stderr.write(`failover bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
