/**
 * Load: `clients` concurrent HTTP clients (keep-alive connections, load-generator.ts) submit `jobs` mixed
 * jobs through the API to a system of separate processes (cluster host with a simulated cluster,
 * API, two workers sharing it); the invariant checker runs every few seconds while the jobs are
 * placed, run and finish, and once more when all is quiet.
 *
 *   pnpm --silent bench load [--jobs 10000] [--clients 200] [--workers 2] [--rate R] [--nodes N] [--warmup 1000] [--json]
 *
 * Closed loop by default (each client sends its next job when the last one is answered);
 * `--rate R` is an open loop: R submissions per second in all, whatever the answers take.
 * `--nodes N`: a cluster of N nodes of 8 GPUs (default 64 nodes, 512 GPUs); team quotas grow with it.
 * `--warmup W` (default 1,000): before the clock, W short jobs go through the same clients at the
 * same pace and the run waits until they have ended, so that the figures are those of a system
 * that has been running (its code compiled, its caches and connections filled), as
 * kube-scheduler's own benchmarks leave their initial pods out of the measurement. The warm-up's
 * own latency is reported beside the run's (`warmup`); `--warmup 0` measures a cold start.
 *
 * Reported (flat fields of the last JSON line): submissionsPerSecond, submitP50Ms, submitP99Ms
 * (from the moment a job's first attempt is sent on an open connection, or is due in the open
 * loop, to its answer), startsPerSecond, violations, lost; and the CPU time of
 * the API and the workers per 1,000 jobs, their peak RSS, the scheduling cycle's p99 and the
 * console Overview's answer time during the load.
 */
import { generateLoad } from './load-generator';
import { createApiKey, createPrismaClient, createTeam, createTenant } from '@gantry/db';
import { generateTopology } from '@gantry/driver';
import { checkInvariants, type InvariantViolation } from '@gantry/api/bench-support';
import { BENCH_ADMIN_KEY, startSystemProcesses } from './processes';
import { Rng } from './rng';
import { scratchDatabase } from './scratch-db';
import { gpusRegistered, percentile as pct, sleep, until } from './waiting';

export interface LoadOptions {
  jobs: number;
  clients: number;
  workers: number;
  /** API processes (1 by default), each on its own port; the clients spread over them. */
  apis: number;
  seed: number;
  /** Open loop: submissions per second in all (undefined: closed loop). */
  rate?: number;
  /** Nodes of 8 GPUs in the simulated cluster (undefined: 64 nodes, 512 GPUs). */
  nodes?: number;
  /** Short jobs submitted and ended before the clock starts (0: none, a cold start). */
  warmup: number;
}

export interface LoadReport {
  bench: 'load';
  jobs: number;
  clients: number;
  workers: number;
  /** API processes (their CPU is summed in apiCpuSeconds; apiRssMaxMB is the largest one's). */
  apis: number;
  /** Open-loop rate (submissions/s), null for the closed loop. */
  rate: number | null;
  nodes: number;
  gpus: number;
  submissionsPerSecond: number;
  submitP50Ms: number;
  submitP99Ms: number;
  /** Jobs started per second between the first and the last start (the scheduler's and workers' pace). */
  startsPerSecond: number;
  /** The most jobs started in any 5 s window, per second (the pace while the queue is deep). */
  peakStartsPerSecond: number;
  /** Invariant violations seen during the run and once settled (details in violationDetails). */
  violations: number;
  lost: number;
  /** CPU seconds of the API process and of all workers from the first submission until drained (/proc). */
  apiCpuSeconds: number;
  workerCpuSeconds: number;
  /** (API + workers) CPU seconds per 1,000 accepted jobs: the cost of a job, independent of how busy the machine is. */
  cpuSecondsPer1000Jobs: number;
  apiRssMaxMB: number;
  workerRssMaxMB: number;
  /** Scheduling cycles run from the clock's start to the drain's end (the warm-up's left out), their p50 and p99 (upper bound of the histogram bucket) and mean (from /metrics). */
  cycles: number;
  cycleP50Ms: number;
  cycleP99Ms: number;
  cycleMeanMs: number;
  /** The console Overview's two requests (GET /v1/utilization, GET /v1/jobs/summary) answered together, every 2 s during the load. */
  overviewP50Ms: number;
  overviewP99Ms: number;
  submission: {
    accepted: number;
    rejected: Record<string, number>;
    retriedAfter503: number;
    errors: number;
    timeouts: number;
    seconds: number;
    perSecond: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
  };
  toRunning: { jobs: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** The warm-up before the clock: its jobs, how long it took, its submissions' latency (a cold system's). */
  warmup: { jobs: number; seconds: number; p50Ms: number; p99Ms: number; maxMs: number };
  drained: { seconds: number; succeeded: number; failed: number; cancelled: number; notTerminal: number };
  invariantChecks: number;
  invariantCheckP50Ms: number;
  violationDetails: InvariantViolation[];
  pass: boolean;
}

/** The job mix: mostly single GPUs, with multi-GPU, MIG slices, shares and leaf-bound gangs. */
export function loadJob(i: number, teamId: string, rng: Rng): Record<string, unknown> {
  const r = rng.next();
  const durationSeconds = 20 + rng.int(100);
  const priority = ['normal', 'normal', 'normal', 'high', 'low'][rng.int(5)];
  const preemptible = rng.next() < 0.25;
  const base = { teamId, name: `load-${i}`, kind: 'batch', priority, preemptible, simulation: { durationSeconds } };
  if (r < 0.45) return { ...base, resources: { gpus: 1 } };
  if (r < 0.55) return { ...base, kind: 'training', resources: { gpus: [2, 4, 8][rng.int(3)] } };
  if (r < 0.57)
    return {
      ...base,
      kind: 'training',
      preemptible: true,
      replicas: 2,
      resources: { gpus: 8, gpuModel: 'H100-80GB' },
      topology: { level: 'leaf', required: true },
    };
  if (r < 0.77) return { ...base, kind: 'notebook', resources: { migProfile: ['1g.10gb', '2g.20gb', '3g.40gb'][rng.int(3)], gpuModel: 'H100-80GB' } };
  return { ...base, kind: 'notebook', resources: { gpuFraction: [0.25, 0.5][rng.int(2)] } };
}

/** The cluster of a run: 64 nodes (512 GPUs) by default, or `nodes` nodes of 8 GPUs over two spines of 32-node leaves. */
export function loadTopology(nodes?: number) {
  if (!nodes) return generateTopology({ spines: 1, leavesPerSpine: 4, nodesPerLeaf: 16, gpusPerNode: 8, models: ['H100-80GB', 'A100-80GB'] });
  const spines = nodes >= 64 ? 2 : 1;
  const nodesPerLeaf = Math.min(32, Math.ceil(nodes / spines));
  return generateTopology({
    spines,
    leavesPerSpine: Math.ceil(nodes / spines / nodesPerLeaf),
    nodesPerLeaf,
    gpusPerNode: 8,
    models: ['H100-80GB', 'A100-80GB'],
  });
}

export async function runLoad(o: LoadOptions, log: (s: string) => void): Promise<LoadReport> {
  const scratch = scratchDatabase('load', log);
  const topology = loadTopology(o.nodes);
  const nodeCount = topology.spines.reduce((n, s) => n + s.leaves.reduce((m, l) => m + l.nodes.length, 0), 0);
  const expectedGpus = topology.spines.reduce((n, s) => n + s.leaves.reduce((m, l) => m + l.nodes.reduce((k, x) => k + x.gpus.length, 0), 0), 0);
  const db = createPrismaClient(scratch.url, { max: 4 });
  const sys = await startSystemProcesses({
    databaseUrl: scratch.url,
    id: scratch.id,
    topology,
    simSpeed: 20,
    simDelays: { startSeconds: 2, migApplySeconds: 10, suspendSeconds: 2 },
    workers: o.workers,
    apis: o.apis,
    log,
  });
  try {
    const gpus = await gpusRegistered(db, expectedGpus, 120_000 + expectedGpus * 10);
    // 5 tenants x 4 teams; one key per client, spread over the teams. Quotas grow with the
    // cluster (24 guaranteed, 96 limit per team at 512 GPUs) so that a large cluster is used.
    const scale = Math.max(1, gpus / 512);
    const teams: { id: string; tenantId: string }[] = [];
    for (let t = 0; t < 5; t++) {
      const tenant = await createTenant(db, { name: `load ${t}`, slug: `load-${t}` });
      for (let k = 0; k < 4; k++) {
        const team = await createTeam(db, tenant.id, {
          name: `team ${k}`,
          slug: `team-${k}`,
          quota: { guaranteed: Math.round(24 * scale), limit: Math.round(96 * scale) },
        });
        teams.push({ id: team.id, tenantId: tenant.id });
      }
    }
    const keys: { key: string; teamId: string }[] = [];
    for (let c = 0; c < o.clients; c++) {
      const team = teams[c % teams.length]!;
      const k = await createApiKey(db, { name: `client ${c}`, role: 'member', tenantId: team.tenantId, teamId: team.id, scopes: ['jobs:read', 'jobs:write'] });
      keys.push({ key: k.key, teamId: team.id });
    }
    log(
      `${nodeCount} nodes, ${gpus} GPUs, ${teams.length} teams, ${keys.length} client keys; submitting ${o.jobs} jobs with ${o.clients} ${o.rate ? `clients at ${o.rate}/s (open loop)` : 'concurrent clients (closed loop)'}`,
    );

    const warmup = await warmUp(db, sys.apiUrls, keys, o, log);

    // invariants, every few seconds while the system works
    const violations = new Map<string, InvariantViolation>();
    const checkMs: number[] = [];
    let checking = true;
    const checker = (async () => {
      while (checking) {
        const t0 = Date.now();
        const r = await checkInvariants(db);
        checkMs.push(Date.now() - t0);
        for (const v of r.violations) violations.set(`${v.rule} ${v.subject}`, v);
        await sleep(3000);
      }
    })();
    // what the console's Overview asks, and the processes' memory, every 2 s
    const overviewMs: number[] = [];
    const rss = { api: 0, worker: 0 };
    const prober = (async () => {
      while (checking) {
        for (const a of sys.apis) rss.api = Math.max(rss.api, a.rssMB());
        for (const w of sys.workers) rss.worker = Math.max(rss.worker, w.rssMB());
        overviewMs.push(await overviewTime(sys.apiUrl));
        await sleep(2000);
      }
    })();
    const cpu = () => ({ api: sys.apis.reduce((s, a) => s + a.cpuSeconds(), 0), workers: sys.workers.reduce((s, w) => s + w.cpuSeconds(), 0) });
    const cpuBefore = cpu();
    // the cycles of the warm-up (a cold worker's first full load and unoptimised code) are not the run's
    const cyclesBefore = await cycleBuckets(sys.apiUrl);

    const rng = new Rng(o.seed);
    const bodies = Array.from({ length: o.jobs }, (_, i) => ({ key: keys[i % keys.length]!, body: loadJob(i, keys[i % keys.length]!.teamId, rng) }));
    const ids: string[] = [];
    const rejected: Record<string, number> = {};
    let retried = 0;
    const latencies: { p50: number; p99: number; max: number }[] = [];
    let errors = 0;
    let timeouts = 0;
    const t0 = Date.now();
    // Clients honour 503 + Retry-After (database busy): what was refused is sent again, up to 5 rounds.
    let todo = bodies;
    for (let round = 0; round < 5 && todo.length; round++) {
      if (round > 0) {
        retried += todo.length;
        await sleep(1000);
      }
      const again: typeof bodies = [];
      const batch = todo;
      const result = await generateLoad({
        url: sys.apiUrls,
        clients: Math.min(o.clients, batch.length),
        rate: o.rate,
        submissions: batch.map((b) => ({
          path: '/v1/jobs',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${b.key.key}` },
          body: JSON.stringify(b.body),
          item: b,
        })),
        onResponse: (status, body, item) => {
          if (status === 201) return void ids.push((JSON.parse(body) as { id: string }).id);
          if (status === 503) return void again.push(item);
          let code = 'unparsable';
          try {
            code = (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? '?';
          } catch {
            // counted as unparsable
          }
          rejected[`${status} ${code}`] = (rejected[`${status} ${code}`] ?? 0) + 1;
        },
      });
      latencies.push(latencySummary(result.latencies));
      errors += result.errors;
      timeouts += result.timeouts;
      todo = again;
    }
    if (todo.length) rejected['503 unavailable (after 5 rounds)'] = todo.length;
    const first = latencies[0]!; // latency of the first round: every job's first attempt
    const submitSeconds = (Date.now() - t0) / 1000;
    log(
      `submitted: ${ids.length} accepted in ${submitSeconds.toFixed(1)} s (${Math.round(ids.length / submitSeconds)}/s), latency p50 ${first.p50} ms p99 ${first.p99} ms (first round); ${retried} retried after 503; rejected ${JSON.stringify(rejected)}`,
    );

    // wait until every accepted job has ended
    const drainStart = Date.now();
    let last = '';
    await until(
      async () => {
        const open = await db.job.count({ where: { state: { in: OPEN_STATES } } });
        const line = `${open} jobs not finished`;
        if (line !== last && (Date.now() - drainStart) % 10_000 < 2000) log(line);
        last = line;
        return open === 0;
      },
      20 * 60_000,
      1000,
    ).catch(() => log('jobs still open after 20 minutes'));
    const drainSeconds = (Date.now() - drainStart) / 1000;
    const cpuAfter = cpu();
    checking = false;
    await Promise.all([checker, prober]);
    const cycles = cycleHistogram(cyclesBefore, await cycleBuckets(sys.apiUrl));
    await sleep(2000);
    const final = await checkInvariants(db, { settled: true, graceSeconds: 2 });
    for (const v of final.violations) violations.set(`${v.rule} ${v.subject}`, v);

    const rows = (await db.job.findMany({ select: { id: true, state: true, createdAt: true, startedAt: true } })).filter((r) => !warmup.ids.has(r.id));
    const byId = new Set(rows.map((r) => r.id));
    const lost = ids.filter((id) => !byId.has(id)).length;
    const waits = rows
      .filter((r) => r.startedAt)
      .map((r) => r.startedAt!.getTime() - r.createdAt.getTime())
      .sort((a, b) => a - b);
    const count = (s: string) => rows.filter((r) => r.state === s).length;
    const sortedChecks = [...checkMs].sort((a, b) => a - b);
    const sortedOverview = [...overviewMs].sort((a, b) => a - b);
    const apiCpu = cpuAfter.api - cpuBefore.api;
    const workerCpu = cpuAfter.workers - cpuBefore.workers;
    const r1 = (n: number) => Math.round(n * 10) / 10;
    const report: LoadReport = {
      bench: 'load',
      jobs: o.jobs,
      clients: o.clients,
      workers: o.workers,
      apis: sys.apis.length,
      rate: o.rate ?? null,
      nodes: nodeCount,
      gpus,
      submissionsPerSecond: Math.round(ids.length / submitSeconds),
      submitP50Ms: first.p50,
      submitP99Ms: first.p99,
      startsPerSecond: startsPerSecond(rows),
      peakStartsPerSecond: peakStartsPerSecond(rows, 5000),
      violations: violations.size,
      lost,
      apiCpuSeconds: r1(apiCpu),
      workerCpuSeconds: r1(workerCpu),
      cpuSecondsPer1000Jobs: ids.length ? r1(((apiCpu + workerCpu) * 1000) / ids.length) : -1,
      apiRssMaxMB: rss.api,
      workerRssMaxMB: rss.worker,
      cycles: cycles.count,
      cycleP50Ms: cycles.p50Ms,
      cycleP99Ms: cycles.p99Ms,
      cycleMeanMs: cycles.meanMs,
      overviewP50Ms: pct(sortedOverview, 50),
      overviewP99Ms: pct(sortedOverview, 99),
      submission: {
        accepted: ids.length,
        rejected,
        retriedAfter503: retried,
        errors,
        timeouts,
        seconds: Math.round(submitSeconds * 10) / 10,
        perSecond: Math.round(ids.length / submitSeconds),
        p50Ms: first.p50,
        p99Ms: first.p99,
        maxMs: first.max,
      },
      toRunning: { jobs: waits.length, p50Ms: pct(waits, 50), p99Ms: pct(waits, 99), maxMs: waits[waits.length - 1] ?? -1 },
      warmup: warmup.report,
      drained: {
        seconds: Math.round(drainSeconds),
        succeeded: count('succeeded'),
        failed: count('failed'),
        cancelled: count('cancelled'),
        notTerminal: rows.length - count('succeeded') - count('failed') - count('cancelled'),
      },
      invariantChecks: checkMs.length + 1,
      invariantCheckP50Ms: pct(sortedChecks, 50),
      violationDetails: [...violations.values()],
      pass: false,
    };
    report.pass = report.violations === 0 && lost === 0 && report.submission.accepted === o.jobs && report.drained.notTerminal === 0;
    return report;
  } finally {
    await sys.stop();
    await db.$disconnect();
    scratch.drop();
  }
}

/** States of a job that has not ended. */
const OPEN_STATES: ('pending' | 'starting' | 'running' | 'suspending')[] = ['pending', 'starting', 'running', 'suspending'];

/** p50, p99 and maximum of sorted latencies, in whole milliseconds (-1 when there are none). */
function latencySummary(sorted: number[]): { p50: number; p99: number; max: number } {
  return { p50: Math.round(pct(sorted, 50)), p99: Math.round(pct(sorted, 99)), max: Math.round(sorted.at(-1) ?? -1) };
}

/** Submissions of the warm-up: the run's mix (its own seed), each job 20 simulated seconds (1 s) long. */
const WARMUP_SECONDS = 20;

/**
 * Sends `o.warmup` short jobs through the run's clients at the run's pace and waits until every
 * one has ended (at most 5 minutes). Returns their ids, which the run's figures leave out.
 */
async function warmUp(
  db: ReturnType<typeof createPrismaClient>,
  url: readonly string[],
  keys: { key: string; teamId: string }[],
  o: LoadOptions,
  log: (s: string) => void,
): Promise<{ ids: Set<string>; report: LoadReport['warmup'] }> {
  const ids = new Set<string>();
  if (o.warmup <= 0) return { ids, report: { jobs: 0, seconds: 0, p50Ms: -1, p99Ms: -1, maxMs: -1 } };
  const t0 = Date.now();
  const rng = new Rng(o.seed + 1);
  const result = await generateLoad({
    url,
    clients: Math.min(o.clients, o.warmup),
    rate: o.rate,
    submissions: Array.from({ length: o.warmup }, (_, i) => {
      const key = keys[i % keys.length]!;
      const body = { ...loadJob(i, key.teamId, rng), name: `warmup-${i}`, simulation: { durationSeconds: WARMUP_SECONDS } };
      return { path: '/v1/jobs', headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` }, body: JSON.stringify(body), item: i };
    }),
    onResponse: (status, body) => {
      if (status === 201) ids.add((JSON.parse(body) as { id: string }).id);
    },
  });
  await until(async () => (await db.job.count({ where: { id: { in: [...ids] }, state: { in: OPEN_STATES } } })) === 0, 5 * 60_000, 500).catch(() =>
    log('warm-up jobs still open after 5 minutes'),
  );
  const { p50, p99, max } = latencySummary(result.latencies);
  const report = { jobs: ids.size, seconds: Math.round((Date.now() - t0) / 100) / 10, p50Ms: p50, p99Ms: p99, maxMs: max };
  log(
    `warm-up: ${ids.size}/${o.warmup} jobs accepted and ended in ${report.seconds} s (submission p50 ${report.p50Ms} ms, p99 ${report.p99Ms} ms); the clock starts now`,
  );
  return { ids, report };
}

/** Milliseconds for the console Overview's requests (capacity, and the jobs per state with the head of the queue), as the bootstrap admin; -1 on failure. */
async function overviewTime(apiUrl: string): Promise<number> {
  const t0 = Date.now();
  const headers = { authorization: `Bearer ${BENCH_ADMIN_KEY}` };
  try {
    const answers = await Promise.all([fetch(`${apiUrl}/v1/utilization`, { headers }), fetch(`${apiUrl}/v1/jobs/summary`, { headers })]);
    await Promise.all(answers.map((a) => a.arrayBuffer()));
    return answers.every((a) => a.ok) ? Date.now() - t0 : -1;
  } catch {
    return -1;
  }
}

/** The scheduling cycle histogram of /metrics (cumulative buckets, count, sum), or undefined when it cannot be read. */
interface CycleBuckets {
  buckets: { le: number; n: number }[];
  count: number;
  sum: number;
}

async function cycleBuckets(apiUrl: string): Promise<CycleBuckets | undefined> {
  try {
    const text = await (await fetch(`${apiUrl}/metrics`, { headers: { authorization: `Bearer ${BENCH_ADMIN_KEY}` } })).text();
    const buckets = [...text.matchAll(/^gantry_scheduling_cycle_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)]
      .map((m) => ({ le: m[1] === '+Inf' ? Infinity : Number(m[1]), n: Number(m[2]) }))
      .sort((x, y) => x.le - y.le);
    const count = Number(/^gantry_scheduling_cycle_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
    const sum = Number(/^gantry_scheduling_cycle_seconds_sum ([\d.eE+-]+)/m.exec(text)?.[1] ?? 0);
    return { buckets, count, sum };
  } catch {
    return undefined;
  }
}

/**
 * The cycles run between two reads of the histogram: count, p50 and p99 (upper bound of the
 * bucket) and mean. Without a first read, every cycle since the workers started.
 */
export function cycleHistogram(
  before: CycleBuckets | undefined,
  after: CycleBuckets | undefined,
): { count: number; p50Ms: number; p99Ms: number; meanMs: number } {
  if (!after) return { count: 0, p50Ms: -1, p99Ms: -1, meanMs: -1 };
  const earlier = (le: number) => before?.buckets.find((b) => b.le === le)?.n ?? 0;
  const buckets = after.buckets.map((b) => ({ le: b.le, n: b.n - earlier(b.le) }));
  const count = after.count - (before?.count ?? 0);
  const sum = after.sum - (before?.sum ?? 0);
  const quantile = (q: number) => {
    const b = buckets.find((x) => x.n >= q * count);
    return b && Number.isFinite(b.le) ? Math.round(b.le * 1000) : -1;
  };
  return { count, p50Ms: quantile(0.5), p99Ms: quantile(0.99), meanMs: count ? Math.round((sum / count) * 1000) : -1 };
}

function startsPerSecond(rows: { startedAt: Date | null }[]): number {
  const starts = rows.filter((r) => r.startedAt).map((r) => r.startedAt!.getTime());
  if (starts.length < 2) return 0;
  const span = (Math.max(...starts) - Math.min(...starts)) / 1000;
  return span > 0 ? Math.round(starts.length / span) : 0;
}

/** The most starts in any window of `ms` (sliding over the starts), per second. */
export function peakStartsPerSecond(rows: { startedAt: Date | null }[], ms: number): number {
  const starts = rows
    .filter((r) => r.startedAt)
    .map((r) => r.startedAt!.getTime())
    .sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < starts.length; j++) {
    while (starts[j]! - starts[i]! > ms) i++;
    best = Math.max(best, j - i + 1);
  }
  return Math.round((best * 1000) / ms);
}

/** `bench load`: progress on stderr, one JSON line on stdout. */
export function loadCommand(opts: Record<string, string>, log: (s: string) => void): void {
  runLoad(
    {
      jobs: Number(opts.jobs ?? 10000),
      clients: Number(opts.clients ?? 200),
      workers: Number(opts.workers ?? 2),
      apis: Number(opts.apis ?? 1),
      seed: Number(opts.seed ?? 42),
      rate: opts.rate ? Number(opts.rate) : undefined,
      nodes: opts.nodes ? Number(opts.nodes) : undefined,
      warmup: Number(opts.warmup ?? 1000),
    },
    log,
  ).then(
    (r) => {
      if (opts.json !== 'true') {
        log(
          `load: ${r.submission.accepted}/${r.jobs} accepted by ${r.clients} clients at ${r.submissionsPerSecond}/s (p50 ${r.submitP50Ms} ms, p99 ${r.submitP99Ms} ms); submission -> running p50 ${r.toRunning.p50Ms} ms, p99 ${r.toRunning.p99Ms} ms; ${r.startsPerSecond} starts/s (peak ${r.peakStartsPerSecond}); ${r.cpuSecondsPer1000Jobs} CPU-s per 1,000 jobs (API ${r.apiCpuSeconds} s, workers ${r.workerCpuSeconds} s); cycle p50 ${r.cycleP50Ms} ms, p99 ${r.cycleP99Ms} ms, mean ${r.cycleMeanMs} ms; ${r.violations} invariant violations in ${r.invariantChecks} checks; lost ${r.lost}: ${r.pass ? 'PASS' : 'FAIL'}`,
        );
      }
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exit(r.pass ? 0 : 1);
    },
    (e: unknown) => {
      process.stderr.write(`load bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
