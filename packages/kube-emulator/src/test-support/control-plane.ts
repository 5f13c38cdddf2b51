/**
 * A real Kubernetes control plane (etcd + kube-apiserver on loopback) for tests, started by
 * scripts/kube-control-plane/start.sh on ports no other test process holds. Several Jest
 * workers may each start one at the same time: ports come from the kernel (bound to port 0) and
 * are reserved with an exclusive file in the OS temp dir until stop().
 *
 * The binary is built once per machine by scripts/kube-control-plane/install.sh (CI's .ci/run
 * calls it). A missing binary is an error that says how to install it, never a skipped test.
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, accessSync, constants, mkdirSync, openSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const DEFAULT_KUBE_APISERVER_BIN = '/opt/kube-control-plane/bin/kube-apiserver';

export interface ControlPlane {
  /** A kubeconfig with a cluster-admin bearer token (TLS verification off). */
  kubeconfigPath: string;
  /** `https://127.0.0.1:<port>` */
  server: string;
  token: string;
  /** The directory holding etcd's data, the logs and the kubeconfig (removed by stop()). */
  dir: string;
  /** Stops kube-apiserver and etcd (SIGTERM, SIGKILL after a few seconds) and removes the directory. Never throws. */
  stop(): Promise<void>;
}

export interface StartControlPlaneOptions {
  /** Default: $KUBE_APISERVER_BIN, else /opt/kube-control-plane/bin/kube-apiserver. */
  apiserverBin?: string;
  /** Time allowed for start.sh (etcd + kube-apiserver ready). Default 45 s (inside Jest's 60 s hook limit). */
  startTimeoutMs?: number;
}

const RESERVATIONS = join(tmpdir(), 'gantry-kube-control-plane-ports');
const open = new Set<{ pids: number[]; dir: string; ports: number[] }>();

/** Starts etcd and kube-apiserver; resolves once /readyz answers. */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = options.apiserverBin ?? process.env.KUBE_APISERVER_BIN ?? DEFAULT_KUBE_APISERVER_BIN;
  assertInstalled(bin);
  const scripts = controlPlaneScriptsDir();
  const [etcdPort, apiPort] = await reserveEtcdAndApiPorts();
  const ports = [etcdPort, etcdPort + 1, apiPort];
  const dir = join(tmpdir(), `gantry-kube-cp-${process.pid}-${etcdPort}`);
  const handle = { pids: [] as number[], dir, ports };
  open.add(handle);
  try {
    await run(join(scripts, 'start.sh'), [dir], {
      env: { ...process.env, KUBE_APISERVER_BIN: bin, KUBE_ETCD_PORT: String(etcdPort), KUBE_API_PORT: String(apiPort) },
      timeoutMs: options.startTimeoutMs ?? 45_000,
    });
  } catch (err) {
    handle.pids = recordedPids(dir);
    const log = tail(join(dir, 'apiserver.log')) || tail(join(dir, 'etcd.log'));
    await stopHandle(handle);
    throw new Error(`the control plane did not start: ${(err as Error).message}${log ? `\n--- log tail ---\n${log}` : ''}`);
  }
  handle.pids = recordedPids(dir);
  const token = readFileSync(join(dir, 'tokens.csv'), 'utf8').split(',')[0].trim();
  let stopped: Promise<void> | undefined;
  return {
    kubeconfigPath: join(dir, 'kubeconfig'),
    server: `https://127.0.0.1:${apiPort}`,
    token,
    dir,
    stop: () => (stopped ??= stopHandle(handle)),
  };
}

function assertInstalled(bin: string): void {
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new Error(
      `kube-apiserver is not installed at ${bin}. Install it once per machine with scripts/kube-control-plane/install.sh ` +
        `(about 3 minutes: builds kube-apiserver v1.20.2 from Debian's sources, installs etcd) or set KUBE_APISERVER_BIN. CI's .ci/run does this.`,
    );
  }
}

/** scripts/kube-control-plane in the repository (this file is in src/test-support or dist/test-support). */
function controlPlaneScriptsDir(): string {
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    const candidate = join(dir, 'scripts', 'kube-control-plane');
    if (existsSync(join(candidate, 'start.sh'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`scripts/kube-control-plane/start.sh not found above ${resolve(__dirname)}`);
}

/** etcd's client port P (its peer port is P + 1, as start.sh uses) and the API server's port. */
async function reserveEtcdAndApiPorts(): Promise<[number, number]> {
  mkdirSync(RESERVATIONS, { recursive: true });
  for (let attempt = 0; attempt < 50; attempt++) {
    const etcd = await kernelFreePort();
    const api = await kernelFreePort();
    const wanted = [etcd, etcd + 1, api];
    if (new Set(wanted).size !== 3 || etcd + 1 > 65535) continue;
    if (!(await isFree(etcd + 1))) continue;
    const held: number[] = [];
    for (const port of wanted) {
      if (!reserve(port)) break;
      held.push(port);
    }
    if (held.length === wanted.length) return [etcd, api];
    held.forEach(release);
  }
  throw new Error('no free ports for etcd and kube-apiserver after 50 attempts');
}

function reserve(port: number): boolean {
  try {
    closeSync(openSync(join(RESERVATIONS, String(port)), 'wx'));
    return true;
  } catch {
    return false;
  }
}

function release(port: number): void {
  try {
    unlinkSync(join(RESERVATIONS, String(port)));
  } catch {
    // already released
  }
}

function kernelFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

function recordedPids(dir: string): number[] {
  return ['apiserver', 'etcd']
    .map((name) => {
      try {
        return Number.parseInt(readFileSync(join(dir, `${name}.pid`), 'utf8'), 10);
      } catch {
        return Number.NaN;
      }
    })
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

async function stopHandle(handle: { pids: number[]; dir: string; ports: number[] }): Promise<void> {
  try {
    handle.pids = [...new Set([...handle.pids, ...recordedPids(handle.dir)])];
    handle.pids.forEach((pid) => signal(pid, 'SIGTERM'));
    const deadline = Date.now() + 5_000;
    while (handle.pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    handle.pids.filter(alive).forEach((pid) => signal(pid, 'SIGKILL'));
    rmSync(handle.dir, { recursive: true, force: true });
  } catch (err) {
    process.emitWarning(`stopping the control plane in ${handle.dir} failed: ${(err as Error).message}`);
  } finally {
    handle.ports.forEach(release);
    open.delete(handle);
  }
}

// A test process that ends without stop() (a crash, forceExit) still takes its control planes down.
process.once('exit', () => {
  for (const handle of open) {
    [...handle.pids, ...recordedPids(handle.dir)].forEach((pid) => signal(pid, 'SIGKILL'));
    try {
      rmSync(handle.dir, { recursive: true, force: true });
    } catch {
      // best effort on exit
    }
    handle.ports.forEach(release);
  }
});

function run(file: string, args: string[], opts: { env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile('bash', [file, ...args], { env: opts.env, timeout: opts.timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} failed (${err.killed ? `killed after ${opts.timeoutMs} ms` : `exit ${err.code}`}): ${stderr.trim()}`));
      else resolveRun(stdout);
    });
  });
}

function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
