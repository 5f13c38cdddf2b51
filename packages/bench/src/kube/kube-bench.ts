/**
 * Gantry on Kubernetes at scale: a real kube-apiserver (etcd, scripts/kube-control-plane) with the
 * kube-emulator registering N 8-GPU nodes, and the whole system on it (API + worker with
 * GANTRY_DRIVER=kubernetes) placing `jobs` 1-GPU jobs submitted through the REST API.
 *
 *   pnpm --silent bench kube [--nodes 1000] [--jobs 2000] [--concurrency 32] [--start-seconds 0.5] [--through system|driver] [--deadline-seconds 900]
 *                            [--apiserver-profile-seconds 0] [--json]
 *
 * Reported (method in docs/benchmarks-kubernetes.md):
 * - syncSeconds: the driver's discover() of the N nodes (what the worker's inventory sync does),
 *   and registeredSeconds: worker start -> every GPU in Gantry's database;
 * - startsPerSecond: jobs / (first submission -> last pod seen Running), p50Ms / p99Ms of
 *   (job created -> its pod seen Running through a watch);
 * - requests per placement: the driver's (a counting proxy between the worker and the API server)
 *   and everyone's (apiserver_request_total, the emulator's kubelet writes included);
 * - lost (a job never Running, or failed) and doubleBound (a whole GPU held by two Running pods);
 * - RSS of kube-apiserver, the emulator and the worker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createApiKey, createPrismaClient, createTeam, createTenant } from '@gantry/db';
import { createDriver, formatTopologyJson, generateTopology, type Topology } from '@gantry/driver';
import { startControlPlane, type ControlPlane } from '@gantry/kube-control-plane';
import { BENCH_ADMIN_KEY, ManagedProcess, freePort, waitForHttp } from '../processes';
import { repoRoot, scratchDatabase } from '../scratch-db';
import { percentile, sleep, until } from '../waiting';
import { apiserverCounters, countsDelta, heartbeats, perUnit, total, type ApiserverCounters, type Counts } from './apiserver-metrics';
import { cpuBetween, sampleCpu, type CpuParts, type CpuSample } from './cpu-accounting';
import { kubeCreate, kubeRequest, type KubeEndpoint } from './kube-http';
import { startCountingProxy } from './counting-proxy';
import { PodWatch } from './pod-watch';
import { processMemoryMiB } from './process-memory';

export interface KubeBenchOptions {
  nodes: number;
  jobs: number;
  /** Submissions in flight at once. */
  concurrency: number;
  /** The emulated kubelet's delay between binding and Running. */
  startSeconds: number;
  /**
   * `system`: jobs submitted to Gantry's REST API, placed by its scheduler, started by its worker
   * (the honest figure). `driver`: the driver's start() called directly with placements made up
   * front: the ceiling of the driver, the API server and the emulator without Gantry's queues.
   */
  through: 'system' | 'driver';
  /** Seconds to wait, after the last submission, for every pod to run; what is not Running then is `unplaced`. */
  deadlineSeconds: number;
  /**
   * When > 0, a CPU profile of the kube-apiserver (its /debug/pprof/profile) over the first this
   * many seconds of the starts, written to the run's log directory (`go tool pprof -top FILE`).
   */
  apiserverProfileSeconds?: number;
  /** Ends the wait early (SIGINT/SIGTERM): the report covers what ran, and everything is stopped. */
  signal?: AbortSignal;
}

export interface KubeBenchReport {
  bench: 'kube';
  method: 'whole-system' | 'driver-only';
  nodes: number;
  gpus: number;
  jobs: number;
  emulatorRegistrationSeconds: number;
  syncSeconds: number;
  registeredSeconds: number;
  submitSeconds: number;
  startsPerSecond: number;
  placementSeconds: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  emulatedStartSeconds: number;
  driverRequests: number;
  driverRequestsPerPlacement: number;
  driverRequestsByKind: Record<string, number>;
  apiserverRequestsPerPlacement: number;
  /** Everyone's requests per placement by `VERB resource[/subresource]` (apiserver_request_total), idle background included. */
  apiserverRequestsPerPlacementByKind: Counts;
  /** The API server's etcd requests per placement by `operation type`, idle background included. */
  etcdRequestsPerPlacementByKind: Counts;
  /** Everyone's requests a second while the cluster idles (Leases, heartbeats), measured before the starts. */
  idleApiserverRequestsPerSecond: number;
  /** The kubelets' heartbeats (Lease renewals, node status) a second: idle, and while pods start (fewer when the emulator or the API server is starved). */
  heartbeatsPerSecond: { idle: number; duringStarts: number };
  /** Jobs accepted but without a Running pod at the deadline (pending in Gantry, or a pod not started yet). */
  unplaced: number;
  /** Starts (driver only) or submissions (whole system) refused, by error. */
  refused: Record<string, number>;
  /** Pods the driver created that were not Running at the deadline (the emulated kubelets' backlog). */
  podsCreatedNotRunning: number;
  lost: number;
  doubleBound: number;
  failedPods: number;
  apiserverRssMiB: number;
  apiserverPeakMiB: number;
  emulatorRssMiB: number;
  emulatorPeakMiB: number;
  workerRssMiB: number;
  workerPeakMiB: number;
  /**
   * CPU milliseconds spent per pod placed, from the first start to the last pod Running: the
   * machine-independent figure on a loaded machine. `driver` is the worker (whole system) or this
   * process (driver only: the driver, the benchmark's counting proxy and pod watch); `api` (the
   * REST API process) and `postgres` (the backends serving the scratch database) are the whole
   * system's only. `total` adds them up.
   */
  cpuMsPerPlacement: CpuMs;
  /** cpuMsPerPlacement less the background the idle cluster burns (Leases, heartbeats) over the same time. */
  netCpuMsPerPlacement: CpuMs;
  /** The benchmark's own process in the whole-system run (counting proxy, pod watch, submissions), per placement: not in `total`. */
  harnessCpuMsPerPlacement: number;
  /** Cores the idle cluster (and idle Gantry) keeps busy (measured for 10 s before the starts). */
  idleCpuCores: number;
  /** (2 cores - idleCpuCores) / netCpuMsPerPlacement: the starts per second 2 cores of their own would sustain. */
  startsPerSecondOnTwoIdleCores: number;
  pass: boolean;
}

type CpuPart = 'apiserver' | 'etcd' | 'emulator' | 'driver' | 'api' | 'postgres';
type CpuMs = Record<CpuPart | 'total', number>;
const CPU_PARTS: CpuPart[] = ['apiserver', 'etcd', 'emulator', 'driver', 'api', 'postgres'];

/** About `nodes` nodes in leaves of 20 under spines of 10 leaves (1,000 = 5 x 10 x 20), 8 H100s each. */
export function benchTopology(nodes: number): Topology {
  const nodesPerLeaf = Math.min(20, nodes);
  const leaves = Math.ceil(nodes / nodesPerLeaf);
  const leavesPerSpine = Math.min(10, leaves);
  const spines = Math.ceil(leaves / leavesPerSpine);
  return generateTopology({ spines, leavesPerSpine, nodesPerLeaf, gpusPerNode: 8, models: ['H100-80GB'], name: `kube-bench-${nodes}` });
}

/** The emulator as its own process (its own RSS); resolves once its nodes are registered. */
async function startEmulatorProcess(
  kubeconfig: string,
  topologyFile: string,
  startSeconds: number,
  logFile: string,
): Promise<{ child: ChildProcess; seconds: number }> {
  const cli = resolve(repoRoot(), 'packages/kube-emulator/dist/cli.js');
  const child = spawn(
    process.execPath,
    [cli, '--kubeconfig', kubeconfig, '--topology', topologyFile, '--metrics-port', '0', '--control-port', '0', '--start-seconds', String(startSeconds)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out = createWriteStream(logFile);
  child.stdout!.pipe(out);
  let text = '';
  const t0 = Date.now();
  return new Promise((ok, fail) => {
    child.stderr!.on('data', (c: Buffer) => {
      out.write(c);
      text += c.toString();
      if (/kube-emulator: \d+ nodes \(/.test(text)) ok({ child, seconds: (Date.now() - t0) / 1000 });
    });
    child.once('exit', (code) => fail(new Error(`the kube-emulator exited (${code}) before registering its nodes: ${text.slice(-500)}`)));
  });
}

/** Times the driver's discover() of the whole cluster (a fresh driver: nothing cached). */
async function timeDiscover(kubeconfig: string, expectNodes: number): Promise<number> {
  const driver = createDriver({ driver: 'kubernetes', kubeconfig });
  try {
    const t0 = Date.now();
    const inventory = await driver.discover();
    const seconds = (Date.now() - t0) / 1000;
    if (inventory.nodes.length < expectNodes) throw new Error(`discover() found ${inventory.nodes.length} of ${expectNodes} nodes`);
    return seconds;
  } finally {
    await driver.close();
  }
}

/** The API and one worker (GANTRY_DRIVER=kubernetes through `kubeconfig`); resolves once the API answers. */
async function startGantry(
  databaseUrl: string,
  id: string,
  kubeconfig: string,
  logDir: string,
  processes: ManagedProcess[],
): Promise<{ apiUrl: string; apiPid?: number; workerPid?: number; startedAt: number }> {
  const apiPort = await freePort();
  const apiMain = resolve(repoRoot(), 'apps/api/dist/main.js');
  const common = {
    DATABASE_URL: databaseUrl,
    GANTRY_QUEUE_PREFIX: `gantry-bench-kube-${id}`,
    GANTRY_DRIVER: 'kubernetes',
    GANTRY_KUBECONFIG: kubeconfig,
    GANTRY_BOOTSTRAP_ADMIN_KEY: BENCH_ADMIN_KEY,
    GANTRY_LOG_LEVEL: 'warn',
    GANTRY_RATE_LIMIT_PER_MINUTE: '1000000',
    GANTRY_INTEGRITY_CHECK_SECONDS: '0',
  };
  const api = new ManagedProcess('api', [apiMain], { ...common, GANTRY_MODE: 'http', PORT: String(apiPort) }, resolve(logDir, 'api.log'));
  const worker = new ManagedProcess('worker', [apiMain], { ...common, GANTRY_MODE: 'worker' }, resolve(logDir, 'worker.log'));
  processes.push(api, worker);
  const startedAt = Date.now();
  api.start();
  worker.start();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  await waitForHttp(`${apiUrl}/healthz`, 90_000);
  return { apiUrl, apiPid: api.child?.pid, workerPid: worker.child?.pid, startedAt };
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export async function runKubeBench(o: KubeBenchOptions, log: (s: string) => void): Promise<KubeBenchReport> {
  const scratch = scratchDatabase('kube', log);
  const logDir = resolve(repoRoot(), '.bench-logs', `kube-${scratch.id}`);
  mkdirSync(logDir, { recursive: true });
  let cp: ControlPlane | undefined;
  let emulator: ChildProcess | undefined;
  const processes: ManagedProcess[] = [];
  let proxy: Awaited<ReturnType<typeof startCountingProxy>> | undefined;
  let watch: PodWatch | undefined;
  const db = createPrismaClient(scratch.url, { max: 4 });
  try {
    cp = await startControlPlane({ startTimeoutMs: 90_000 });
    const api = { server: cp.server, token: cp.adminToken };
    const apiserverPid = Number(readFileSync(resolve(cp.dir, 'apiserver.pid'), 'utf8'));
    const etcdPid = Number(readFileSync(resolve(cp.dir, 'etcd.pid'), 'utf8'));
    log(`kube-apiserver ${cp.server} (pid ${apiserverPid}), logs in ${logDir}`);
    // the workload namespace (deploy/kubernetes/namespace.yaml); the driver runs as admin here
    await kubeCreate(api, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gantry' } });

    const topology = benchTopology(o.nodes);
    const nodes = topology.spines.reduce((s, sp) => s + sp.leaves.reduce((t, l) => t + l.nodes.length, 0), 0);
    const gpus = nodes * 8;
    const topologyFile = resolve(logDir, 'topology.json');
    writeFileSync(topologyFile, formatTopologyJson(topology));
    const em = await startEmulatorProcess(cp.kubeconfigPath, topologyFile, o.startSeconds, resolve(logDir, 'emulator.log'));
    emulator = em.child;
    log(`kube-emulator: ${nodes} nodes x 8 GPUs registered in ${em.seconds.toFixed(1)} s`);

    const syncSeconds = await timeDiscover(cp.kubeconfigPath, nodes);
    log(`driver discover() of ${nodes} nodes: ${syncSeconds.toFixed(2)} s`);

    // The worker's driver goes through the counting proxy (same admin token, the proxy's own TLS).
    proxy = await startCountingProxy(cp.server, logDir);
    const proxyKubeconfig = resolve(logDir, 'worker.kubeconfig');
    writeFileSync(proxyKubeconfig, readFileSync(cp.kubeconfigPath, 'utf8').replace(cp.server, proxy.url));

    const created = new Map<string, number>();
    const rejected: Record<string, number> = {};
    let registeredSeconds = -1;
    let system: Awaited<ReturnType<typeof startGantry>> | undefined;
    watch = new PodWatch(api, 'gantry', log);
    let counted = { before: 0, counts: {} as Record<string, number>, apiserver: { requests: {}, etcd: {} } as ApiserverCounters };
    const pids = (pid: number | undefined) => () => (pid ? [pid] : []);
    const cpuParts: CpuParts<CpuPart | 'harness'> = {
      apiserver: pids(apiserverPid),
      etcd: pids(etcdPid),
      emulator: pids(emulator.pid),
      // the worker's driver; driver only: this process (the driver, the counting proxy, the pod watch)
      driver: () => (o.through === 'system' ? (system?.workerPid ? [system.workerPid] : []) : [process.pid]),
      api: () => (system?.apiPid ? [system.apiPid] : []),
      postgres: async () => (system ? databaseBackends(db, scratch.name) : []),
      harness: () => (o.through === 'system' ? [process.pid] : []),
    };
    let cpuBefore: CpuSample<CpuPart | 'harness'> = await sampleCpu(cpuParts);
    const cpuIdlePerSecond = Object.fromEntries(CPU_PARTS.map((k) => [k, 0])) as Record<CpuPart, number>;
    let idleRequestsPerSecond = 0;
    let idleHeartbeatsPerSecond = 0;
    let profile: Promise<void> | undefined;
    let cpuAt = Date.now();
    const startCounting = async () => {
      await watch!.start();
      // the cluster's background before any start (Leases, heartbeats, watches): measured for 10 s
      const idleFrom = await sampleCpu(cpuParts);
      const idleRequests = (await apiserverCounters(api)).requests;
      const idleAt = Date.now();
      await sleep(10_000);
      const idle = cpuBetween(idleFrom, await sampleCpu(cpuParts));
      const idleSeconds = (Date.now() - idleAt) / 1000;
      for (const k of CPU_PARTS) cpuIdlePerSecond[k] = idle[k] / idleSeconds;
      counted = { before: proxy!.total(), counts: proxy!.counts(), apiserver: await apiserverCounters(api) };
      idleRequestsPerSecond = (total(counted.apiserver.requests) - total(idleRequests)) / idleSeconds;
      idleHeartbeatsPerSecond = (heartbeats(counted.apiserver.requests) - heartbeats(idleRequests)) / idleSeconds;
      cpuBefore = await sampleCpu(cpuParts);
      cpuAt = Date.now();
      if (o.apiserverProfileSeconds) profile = profileApiserver(api, o.apiserverProfileSeconds, resolve(logDir, 'apiserver.cpu.pprof'), log);
    };
    let t0 = Date.now();
    if (o.through === 'system') {
      system = await startGantry(scratch.url, scratch.id, proxyKubeconfig, logDir, processes);
      const { apiUrl } = system;
      await until(async () => (await db.gpu.count()) >= gpus, 180_000, 250);
      registeredSeconds = (Date.now() - system.startedAt) / 1000;
      log(`worker start -> ${gpus} GPUs in Gantry's database: ${registeredSeconds.toFixed(1)} s`);
      const tenant = await createTenant(db, { name: 'kube bench', slug: 'kube-bench', gpuTotal: gpus });
      const team = await createTeam(db, tenant.id, { name: 'bench', slug: 'bench', quota: { guaranteed: gpus, limit: gpus } });
      const key = await createApiKey(db, { name: 'bench', role: 'member', tenantId: tenant.id, teamId: team.id, scopes: ['jobs:read', 'jobs:write'] });
      await startCounting();
      t0 = Date.now();
      await pool(
        Array.from({ length: o.jobs }, (_, i) => i),
        o.concurrency,
        async (i) => {
          const res = await fetch(`${apiUrl}/v1/jobs`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
            body: JSON.stringify({ teamId: team.id, name: `kube-bench-${i}`, kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 3600 } }),
          });
          const body = (await res.json()) as { id?: string; createdAt?: string; error?: { code: string } };
          if (res.status === 201 && body.id) created.set(body.id, Date.parse(body.createdAt!));
          else rejected[`${res.status} ${body.error?.code ?? '?'}`] = (rejected[`${res.status} ${body.error?.code ?? '?'}`] ?? 0) + 1;
        },
      );
    } else {
      const driver = createDriver({ driver: 'kubernetes', kubeconfig: proxyKubeconfig });
      const nodeNames = topology.spines.flatMap((sp) => sp.leaves.flatMap((l) => l.nodes.map((n) => n.name)));
      await startCounting();
      t0 = Date.now();
      try {
        await pool(
          Array.from({ length: o.jobs }, (_, i) => i),
          o.concurrency,
          async (i) => {
            const jobId = `kb-${scratch.id.replace(/_/g, '-')}-${i}`;
            created.set(jobId, Date.now());
            const replica = { replica: 0, nodeName: nodeNames[i % nodeNames.length]!, gpus: [{ index: Math.floor(i / nodeNames.length) % 8 }] };
            await driver.start({ jobId, kind: 'batch', replicas: [replica], durationSeconds: 3600 }).catch((err: unknown) => {
              created.delete(jobId);
              rejected[(err as Error).message.slice(0, 80)] = (rejected[(err as Error).message.slice(0, 80)] ?? 0) + 1;
            });
          },
        );
      } finally {
        await driver.close();
      }
    }
    const submitSeconds = (Date.now() - t0) / 1000;
    log(
      `${created.size} jobs ${o.through === 'system' ? 'submitted' : 'started through the driver'} in ${submitSeconds.toFixed(1)} s${Object.keys(rejected).length ? `; rejected ${JSON.stringify(rejected)}` : ''}`,
    );

    let lastLine = 0;
    let progress = { running: -1, at: Date.now() };
    await until(
      async () => {
        const running = [...created.keys()].filter((id) => watch!.runningAt.has(id)).length;
        if (Date.now() - lastLine > 5000) {
          lastLine = Date.now();
          log(`${running} / ${created.size} pods Running after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        }
        if (running !== progress.running) progress = { running, at: Date.now() };
        if (o.signal?.aborted) throw new Error('interrupted');
        // a stall is a result (lost jobs), not a reason to wait for the whole limit
        if (Date.now() - progress.at > 60_000) throw new Error('no pod started for 60 s');
        return running === created.size;
      },
      o.deadlineSeconds * 1000,
      100,
    ).catch((err: unknown) => log(`not every job had a Running pod: ${(err as Error).message} (see ${logDir}/worker.log)`));
    const runningTimes = [...created.keys()].map((id) => watch!.runningAt.get(id)).filter((t): t is number => t !== undefined);
    const lastRunning = runningTimes.length ? Math.max(...runningTimes) : Date.now();
    const placementSeconds = (lastRunning - t0) / 1000;
    const latencies = [...created.entries()]
      .filter(([id]) => watch!.runningAt.has(id))
      .map(([id, at]) => watch!.runningAt.get(id)! - at)
      .sort((a, b) => a - b);

    const cpuUsed = cpuBetween(cpuBefore, await sampleCpu(cpuParts));
    await profile;
    const cpuSeconds = (Date.now() - cpuAt) / 1000;
    const driverRequests = proxy.total() - counted.before;
    const byKind = Object.fromEntries(
      Object.entries(proxy.counts())
        .map(([k, n]) => [k, n - (counted.counts[k] ?? 0)] as const)
        .filter(([, n]) => n > 0),
    );
    const apiserverAfter = await apiserverCounters(api);
    const apiserverByKind = countsDelta(counted.apiserver.requests, apiserverAfter.requests);
    const etcdByKind = countsDelta(counted.apiserver.etcd, apiserverAfter.etcd);
    const apiserverRequests = total(apiserverByKind);
    await sleep(1000); // pods seen Running settle in the database too
    // lost: failed, cancelled or finished in Gantry instead of running
    const ids = [...created.keys()];
    const lostInGantry = o.through === 'system' ? await db.job.count({ where: { id: { in: ids }, state: { notIn: ['running', 'starting', 'pending'] } } }) : 0;
    const noPod = created.size - runningTimes.length;
    const memory = (pid: number | undefined) => (pid ? processMemoryMiB(pid) : undefined) ?? { rssMiB: -1, peakMiB: -1 };
    const apiserverMemory = memory(apiserverPid);
    const emulatorMemory = memory(emulator.pid);
    const workerMemory = memory(system?.workerPid);
    // a job Gantry placed whose pod the (busy) emulated kubelet has not started yet is unplaced, not lost
    const unplaced = Math.max(0, noPod - lostInGantry);
    const lost = lostInGantry + (o.jobs - created.size);
    const placed = runningTimes.length;
    const startsPerSecond = placed / Math.max(0.001, placementSeconds);
    const perPlacementMs = (seconds: number) => Math.round((seconds * 1000) / Math.max(1, placed));
    const withTotal = (ms: Record<CpuPart, number>): CpuMs => ({ ...ms, total: CPU_PARTS.reduce((sum, k) => sum + ms[k], 0) });
    const cpuMsPerPlacement = withTotal(Object.fromEntries(CPU_PARTS.map((k) => [k, perPlacementMs(cpuUsed[k])])) as Record<CpuPart, number>);
    // The same, less the background: for the cluster's processes, the idle cluster's CPU per
    // heartbeat (Lease renewal, node status) times the heartbeats sent meanwhile (a starved
    // emulator sends fewer: subtracting by time would take off work that was never done); for
    // Gantry's processes (timers, reconcile), their idle CPU a second times the seconds.
    const heartbeatSeconds = idleHeartbeatsPerSecond > 0 ? heartbeats(apiserverByKind) / idleHeartbeatsPerSecond : cpuSeconds;
    const backgroundSeconds = (k: CpuPart) => (k === 'apiserver' || k === 'etcd' || k === 'emulator' ? heartbeatSeconds : cpuSeconds);
    const netCpuMsPerPlacement = withTotal(
      Object.fromEntries(CPU_PARTS.map((k) => [k, Math.max(0, perPlacementMs(cpuUsed[k] - cpuIdlePerSecond[k] * backgroundSeconds(k)))])) as Record<
        CpuPart,
        number
      >,
    );
    const idleCpuCores = round(Object.values(cpuIdlePerSecond).reduce((a, b) => a + b, 0));
    const report: KubeBenchReport = {
      bench: 'kube',
      method: o.through === 'system' ? 'whole-system' : 'driver-only',
      nodes,
      gpus,
      jobs: created.size,
      emulatorRegistrationSeconds: round(em.seconds),
      syncSeconds: round(syncSeconds),
      registeredSeconds: round(registeredSeconds),
      submitSeconds: round(submitSeconds),
      startsPerSecond: round(startsPerSecond),
      placementSeconds: round(placementSeconds),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1) ?? -1,
      emulatedStartSeconds: o.startSeconds,
      driverRequests,
      driverRequestsPerPlacement: round(driverRequests / Math.max(1, placed)),
      driverRequestsByKind: byKind,
      apiserverRequestsPerPlacement: round(apiserverRequests / Math.max(1, placed)),
      apiserverRequestsPerPlacementByKind: perUnit(apiserverByKind, placed),
      etcdRequestsPerPlacementByKind: perUnit(etcdByKind, placed),
      idleApiserverRequestsPerSecond: round(idleRequestsPerSecond),
      heartbeatsPerSecond: { idle: round(idleHeartbeatsPerSecond), duringStarts: round(heartbeats(apiserverByKind) / Math.max(0.001, cpuSeconds)) },
      unplaced,
      refused: rejected,
      podsCreatedNotRunning: Math.max(0, (byKind['CREATE pods'] ?? 0) - placed),
      lost,
      doubleBound: watch.doubleBound.length,
      failedPods: watch.failed.size,
      apiserverRssMiB: apiserverMemory.rssMiB,
      apiserverPeakMiB: apiserverMemory.peakMiB,
      emulatorRssMiB: emulatorMemory.rssMiB,
      emulatorPeakMiB: emulatorMemory.peakMiB,
      workerRssMiB: workerMemory.rssMiB,
      workerPeakMiB: workerMemory.peakMiB,
      cpuMsPerPlacement,
      netCpuMsPerPlacement,
      harnessCpuMsPerPlacement: perPlacementMs(cpuUsed.harness),
      idleCpuCores,
      startsPerSecondOnTwoIdleCores: round((Math.max(0, 2 - idleCpuCores) * 1000) / Math.max(1, netCpuMsPerPlacement.total)),
      pass: syncSeconds < 10 && startsPerSecond >= 100 && unplaced === 0 && lost === 0 && watch.doubleBound.length === 0,
    };
    for (const d of watch.doubleBound.slice(0, 5)) log(`DOUBLE-BOUND ${d}`);
    for (const [pod, reason] of [...watch.failed.entries()].slice(0, 5)) log(`failed pod ${pod}: ${reason}`);
    log(
      `${placed} pods Running in ${placementSeconds.toFixed(1)} s: ${startsPerSecond.toFixed(1)} starts/s; created -> Running p50 ${report.p50Ms} ms p99 ${report.p99Ms} ms; ` +
        `${report.driverRequestsPerPlacement} driver requests per placement (${report.apiserverRequestsPerPlacement} for everyone); lost ${lost}, double-bound ${report.doubleBound}; ` +
        `CPU per placement ${JSON.stringify(cpuMsPerPlacement)} ms, net of the idle background ${JSON.stringify(netCpuMsPerPlacement)} ms (idle: ${idleCpuCores} cores)`,
    );
    return report;
  } finally {
    watch?.stop();
    await Promise.all(processes.map((p) => p.stop()));
    await proxy?.close();
    if (emulator && emulator.exitCode === null) {
      const exited = new Promise((r) => emulator!.once('exit', r));
      emulator.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
    }
    await cp?.stop();
    await db.$disconnect();
    scratch.drop();
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

/** `bench kube`: progress on stderr, one JSON line on stdout. */
export function kubeCommand(opts: Record<string, string>, log: (s: string) => void): void {
  const options = {
    nodes: Number(opts.nodes ?? 1000),
    jobs: Number(opts.jobs ?? 2000),
    concurrency: Number(opts.concurrency ?? 32),
    startSeconds: Number(opts['start-seconds'] ?? 0.5),
    through: opts.through === 'driver' ? ('driver' as const) : ('system' as const),
    deadlineSeconds: Number(opts['deadline-seconds'] ?? 900),
    apiserverProfileSeconds: Number(opts['apiserver-profile-seconds'] ?? 0),
  };
  const abort = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: reporting what ran, then stopping everything`);
      abort.abort();
    });
  runKubeBench({ ...options, signal: abort.signal }, log).then(
    (r) => {
      process.stdout.write(JSON.stringify(r) + '\n');
      process.exit(0);
    },
    (e: unknown) => {
      process.stderr.write(`kube bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}

/** Pids of the Postgres backends serving `database` (its connections: the API's, the worker's, this benchmark's). */
async function databaseBackends(db: ReturnType<typeof createPrismaClient>, database: string): Promise<number[]> {
  const rows = await db.$queryRaw<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = ${database}`;
  return rows.map((r) => Number(r.pid));
}

/** The API server's CPU profile over the next `seconds`, saved to `file` (never fails the run). */
async function profileApiserver(api: KubeEndpoint, seconds: number, file: string, log: (s: string) => void): Promise<void> {
  try {
    const res = await kubeRequest(api, `/debug/pprof/profile?seconds=${seconds}`);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    writeFileSync(file, Buffer.concat(chunks));
    log(`kube-apiserver CPU profile (${seconds} s of the starts): ${file}`);
  } catch (err) {
    log(`no kube-apiserver CPU profile: ${(err as Error).message}`);
  }
}
