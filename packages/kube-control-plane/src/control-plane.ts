/**
 * A real Kubernetes control plane (etcd + kube-apiserver on loopback) for tests, started by this
 * package's scripts/start.sh on ports no other test process holds (ports.ts). The API server can
 * be stopped and started again on the same etcd and port (a restart); stop() is bounded (SIGTERM,
 * SIGKILL after 5 s) and never throws, and a test process that exits without it still takes its
 * control planes down.
 *
 * The binary is built once per machine by scripts/install.sh (CI's .ci/run calls it). A missing
 * binary is an error that says how to install it, never a skipped test.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { releasePort, reserveControlPlanePorts } from './ports';
import { recordedPid, signal, terminate, type ControlPlaneProcess } from './processes';

export const DEFAULT_KUBE_APISERVER_BIN = '/opt/kube-control-plane/bin/kube-apiserver';

/** This package's shell scripts: install.sh, start.sh, start-apiserver.sh, stop.sh. */
export const CONTROL_PLANE_SCRIPTS_DIR = join(__dirname, '..', 'scripts');

export interface ControlPlane {
  /** `https://127.0.0.1:<port>` (TLS with a self-signed certificate: skip verification). */
  server: string;
  /** Bearer token of a system:masters user. */
  adminToken: string;
  /** A kubeconfig file with the admin token (TLS verification off). */
  kubeconfigPath: string;
  /** The directory holding etcd's data, the logs and the kubeconfig (removed by stop()). */
  dir: string;
  /** What `KubeConfig.loadFromOptions()` of @kubernetes/client-node takes, for `token` (default the admin's). */
  kubeConfigOptions(token?: string): KubeConfigOptions;
  /** Stops the API server (etcd keeps running); bounded. */
  stopApiServer(): Promise<void>;
  /** Starts the API server again on the same port and etcd; resolves when /readyz answers. */
  startApiServer(): Promise<void>;
  /** Stops kube-apiserver and etcd and removes the directory. Never throws; idempotent. */
  stop(): Promise<void>;
}

export interface KubeConfigOptions {
  clusters: { name: string; server: string; skipTLSVerify: boolean }[];
  users: { name: string; token: string }[];
  contexts: { name: string; cluster: string; user: string }[];
  currentContext: string;
}

export interface StartControlPlaneOptions {
  /** Default: $KUBE_APISERVER_BIN, else /opt/kube-control-plane/bin/kube-apiserver. */
  apiserverBin?: string;
  /**
   * Time allowed for etcd + kube-apiserver to be ready (and for a restart). Default 100 s: about
   * 4 s on an idle machine, but a minute and more on 2 cores busy with other work. Give the Jest
   * hook that starts it more than this.
   */
  startTimeoutMs?: number;
}

interface Handle {
  dir: string;
  ports: number[];
}
const open = new Set<Handle>();

/** Starts etcd and kube-apiserver; resolves once /readyz answers. */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = options.apiserverBin ?? process.env.KUBE_APISERVER_BIN ?? DEFAULT_KUBE_APISERVER_BIN;
  assertInstalled(bin);
  const timeoutMs = options.startTimeoutMs ?? 100_000;
  const env = { ...process.env, KUBE_APISERVER_BIN: bin, KUBE_READY_TIMEOUT_SECONDS: String(Math.ceil(timeoutMs / 1000)) };
  const ports = await reserveControlPlanePorts();
  const handle: Handle = { dir: join(tmpdir(), `gantry-kube-cp-${process.pid}-${ports.etcd}`), ports: ports.all };
  open.add(handle);
  const { dir } = handle;
  const failed = async (what: string, err: unknown) => {
    const log = tail(join(dir, 'apiserver.log')) || tail(join(dir, 'etcd.log'));
    await stopHandle(handle);
    return new Error(`${what}: ${(err as Error).message}${log ? `\n--- log tail ---\n${log}` : ''}`);
  };
  try {
    await script('start.sh', [dir], { env: { ...env, KUBE_ETCD_PORT: String(ports.etcd), KUBE_API_PORT: String(ports.apiServer) }, timeoutMs });
  } catch (err) {
    throw await failed('the control plane did not start', err);
  }
  const adminToken = readFileSync(join(dir, 'tokens.csv'), 'utf8').split(',')[0].trim();
  const server = `https://127.0.0.1:${ports.apiServer}`;
  let stopped: Promise<void> | undefined;
  return {
    server,
    adminToken,
    kubeconfigPath: join(dir, 'kubeconfig'),
    dir,
    kubeConfigOptions: (token = adminToken) => ({
      clusters: [{ name: 'local', server, skipTLSVerify: true }],
      users: [{ name: 'user', token }],
      contexts: [{ name: 'local', cluster: 'local', user: 'user' }],
      currentContext: 'local',
    }),
    stopApiServer: () => stopProcesses(dir, ['apiserver']),
    startApiServer: async () => {
      try {
        await script('start-apiserver.sh', [dir], { env, timeoutMs });
      } catch (err) {
        throw new Error(`kube-apiserver did not start again: ${(err as Error).message}\n--- log tail ---\n${tail(join(dir, 'apiserver.log'))}`);
      }
    },
    stop: () => (stopped ??= stopHandle(handle)),
  };
}

function assertInstalled(bin: string): void {
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    throw new Error(
      `kube-apiserver is not installed at ${bin}. Install it once per machine with ` +
        `bash packages/kube-control-plane/scripts/install.sh (about 3 minutes: builds kube-apiserver v1.20.2 from Debian's ` +
        `sources, installs etcd) or set KUBE_APISERVER_BIN. CI's .ci/run does this.`,
    );
  }
}

async function stopProcesses(dir: string, names: ControlPlaneProcess[]): Promise<void> {
  const pids = names.map((name) => recordedPid(dir, name)).filter((pid): pid is number => pid !== undefined);
  await terminate(pids);
  for (const name of names) rmSync(join(dir, `${name}.pid`), { force: true });
}

async function stopHandle(handle: Handle): Promise<void> {
  try {
    await stopProcesses(handle.dir, ['apiserver', 'etcd']);
    rmSync(handle.dir, { recursive: true, force: true });
  } catch (err) {
    process.emitWarning(`stopping the control plane in ${handle.dir} failed: ${(err as Error).message}`);
  } finally {
    handle.ports.forEach(releasePort);
    open.delete(handle);
  }
}

// A test process that ends without stop() (a crash, forceExit) still takes its control planes down.
process.once('exit', () => {
  for (const handle of open) {
    for (const name of ['apiserver', 'etcd'] as const) {
      const pid = recordedPid(handle.dir, name);
      if (pid !== undefined) signal(pid, 'SIGKILL');
    }
    try {
      rmSync(handle.dir, { recursive: true, force: true });
    } catch {
      // best effort on exit
    }
    handle.ports.forEach(releasePort);
  }
});

function script(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<string> {
  const file = join(CONTROL_PLANE_SCRIPTS_DIR, name);
  return new Promise((resolveRun, reject) => {
    execFile('bash', [file, ...args], { env: opts.env, timeout: opts.timeoutMs + 10_000, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${name} failed (${err.killed ? `killed after ${opts.timeoutMs + 10_000} ms` : `exit ${err.code}`}): ${stderr.trim()}`));
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
