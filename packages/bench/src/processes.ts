/**
 * The whole system as separate processes, for benchmarks that need real process boundaries
 * (load with two workers, kill -9 crash loops): a cluster host serving one simulated cluster,
 * the API and N workers (GANTRY_DRIVER=remote), all on one scratch database and queue prefix.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { formatTopologyJson, type SimulatedDelays, type Topology } from '@gantry/driver';
import { repoRoot } from './scratch-db';

export const BENCH_ADMIN_KEY = 'gk_benchadmin_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

export interface SystemOptions {
  /** Scratch database URL and a unique id (queue prefix, log folder). */
  databaseUrl: string;
  id: string;
  topology: Topology;
  simSpeed: number;
  simDelays?: Partial<SimulatedDelays>;
  /** Extra environment of the API and the workers. */
  env?: Record<string, string>;
  log: (s: string) => void;
}

/** One managed child process; its output goes to a log file. */
export class ManagedProcess {
  child?: ChildProcess;

  constructor(
    readonly name: string,
    private readonly args: string[],
    private readonly env: Record<string, string>,
    private readonly logFile: string,
  ) {}

  start(extraEnv: Record<string, string> = {}): void {
    const out = createWriteStream(this.logFile, { flags: 'a' });
    const child = spawn(process.execPath, [...(process.env.GANTRY_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...this.args], {
      env: { ...process.env, ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    this.child = child;
  }

  /** CPU seconds (user + system) the process has used so far, from /proc (0 when it is not running). */
  cpuSeconds(): number {
    if (!this.child?.pid || !this.running) return 0;
    try {
      // fields after the command name: state is field 3, utime 14 and stime 15 (clock ticks, 100/s on Linux)
      const stat = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      return 0;
    }
  }

  /** Resident memory in MB now, from /proc (0 when it is not running). */
  rssMB(): number {
    if (!this.child?.pid || !this.running) return 0;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, 'utf8'));
      return m ? Math.round(Number(m[1]) / 1024) : 0;
    } catch {
      return 0;
    }
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** kill -9 and wait for the exit. */
  async kill9(): Promise<void> {
    const c = this.child;
    if (!c || !this.running) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (!c || !this.running) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

export async function waitForHttp(url: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`${url} not up within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface RunningSystem {
  /** The first API process's URL (and process); `apiUrls` and `apis` hold every one. */
  apiUrl: string;
  apiUrls: string[];
  clusterUrl: string;
  logDir: string;
  cluster: ManagedProcess;
  api: ManagedProcess;
  apis: ManagedProcess[];
  workers: ManagedProcess[];
  stop(): Promise<void>;
}

/**
 * Starts the cluster host, `apis` API processes (1 by default; each on its own port, as behind a
 * load balancer) and `workers` workers; resolves once every API answers.
 */
export async function startSystemProcesses(o: SystemOptions & { workers: number; apis?: number }): Promise<RunningSystem> {
  const root = repoRoot();
  const logDir = resolve(root, '.bench-logs', o.id);
  mkdirSync(logDir, { recursive: true });
  const topologyFile = resolve(logDir, 'topology.json');
  writeFileSync(topologyFile, formatTopologyJson(o.topology));
  const clusterPort = await freePort();
  const apiPorts: number[] = [];
  for (let i = 0; i < Math.max(1, o.apis ?? 1); i++) apiPorts.push(await freePort());
  const clusterUrl = `http://127.0.0.1:${clusterPort}`;
  const apiMain = resolve(root, 'apps/api/dist/main.js');
  const cluster = new ManagedProcess(
    'cluster',
    [resolve(root, 'packages/driver/dist/remote/serve.js'), '--port', String(clusterPort)],
    {
      GANTRY_SIM_CLUSTER: topologyFile,
      GANTRY_SIM_SPEED: String(o.simSpeed),
      ...(o.simDelays ? { GANTRY_SIM_DELAYS: JSON.stringify(o.simDelays) } : {}),
    },
    resolve(logDir, 'cluster.log'),
  );
  const common = {
    DATABASE_URL: o.databaseUrl,
    GANTRY_QUEUE_PREFIX: `gantry-bench-${o.id}`,
    GANTRY_DRIVER: 'remote',
    GANTRY_DRIVER_URL: clusterUrl,
    GANTRY_SIM_SPEED: String(o.simSpeed),
    GANTRY_BOOTSTRAP_ADMIN_KEY: BENCH_ADMIN_KEY,
    GANTRY_LOG_LEVEL: 'warn',
    ...o.env,
  };
  const apis = apiPorts.map(
    (port, i) =>
      new ManagedProcess(
        i ? `api-${i + 1}` : 'api',
        [apiMain],
        { ...common, GANTRY_MODE: 'http', PORT: String(port) },
        resolve(logDir, i ? `api-${i + 1}.log` : 'api.log'),
      ),
  );
  const api = apis[0]!;
  const workers = Array.from(
    { length: o.workers },
    (_, i) => new ManagedProcess(`worker-${i + 1}`, [apiMain], { ...common, GANTRY_MODE: 'worker' }, resolve(logDir, `worker-${i + 1}.log`)),
  );
  const apiUrls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
  const apiUrl = apiUrls[0]!;
  const stopAll = () => Promise.all([...apis.map((a) => a.stop()), ...workers.map((w) => w.stop())]);
  try {
    cluster.start();
    await waitForHttp(`${clusterUrl}/info`, 30_000);
    for (const a of apis) a.start();
    for (const w of workers) w.start();
    for (const url of apiUrls) await waitForHttp(`${url}/healthz`, 60_000);
  } catch (e) {
    // nothing left running when the system does not come up (its logs say why)
    await stopAll();
    await cluster.stop();
    throw new Error(`${e instanceof Error ? e.message : String(e)} (logs in ${logDir})`);
  }
  o.log(`system up: api ${apiUrls.join(', ')}, cluster host ${clusterUrl}, ${workers.length} workers (logs in ${logDir})`);
  return {
    apiUrl,
    apiUrls,
    clusterUrl,
    logDir,
    cluster,
    api,
    apis,
    workers,
    async stop() {
      await stopAll();
      await cluster.stop();
    },
  };
}
