/**
 * A real Kubernetes control plane for the driver's tests: etcd and kube-apiserver on loopback
 * ports of their own, in a temp dir, with the flags of scripts/kube-control-plane/start.sh
 * (token auth, RBAC, service account signing key, no ServiceAccount admission). There are no
 * kubelets: tests play them by patching pod status. The API server can be stopped and started
 * again on the same etcd (a restart). `stop()` always finishes: each process gets SIGTERM, then
 * SIGKILL after 5 s.
 *
 * Needs the kube-apiserver binary at $KUBE_APISERVER_BIN or /opt/kube-control-plane/bin/kube-apiserver
 * (scripts/kube-control-plane/install.sh builds it; CI installs it) and `etcd` on PATH. Missing
 * binaries fail the suite with that message; they are never skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync, openSync, closeSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadClientNode } from '../kube-api';

export const DEFAULT_KUBE_APISERVER_BIN = '/opt/kube-control-plane/bin/kube-apiserver';

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  server: string;
  /** Bearer token of a system:masters user. */
  adminToken: string;
  dir: string;
  /** A KubeConfig for `token` (default the admin's). */
  kubeConfig(token?: string): KubeConfig;
  /** Stops the API server (etcd keeps running). */
  stopApiServer(): Promise<void>;
  /** Starts the API server again on the same port and etcd; resolves when it is ready. */
  startApiServer(): Promise<void>;
  stop(): Promise<void>;
}

export async function startControlPlane(): Promise<ControlPlane> {
  const bin = process.env.KUBE_APISERVER_BIN ?? DEFAULT_KUBE_APISERVER_BIN;
  if (!existsSync(bin)) {
    throw new Error(`kube-apiserver not found at ${bin}: run scripts/kube-control-plane/install.sh (or set KUBE_APISERVER_BIN)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'gantry-kcp-'));
  const processes: { etcd?: ChildProcess; apiserver?: ChildProcess } = {};
  const stopAll = async () => {
    await stopProcess(processes.apiserver);
    await stopProcess(processes.etcd);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [etcdPort, peerPort, apiPort] = await freePorts(3);
    mkdirSync(join(dir, 'etcd'));
    mkdirSync(join(dir, 'certs'));
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(dir, 'certs', 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }));
    const adminToken = randomBytes(16).toString('hex');
    writeFileSync(join(dir, 'tokens.csv'), `${adminToken},admin,admin,system:masters\n`);

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    processes.etcd = spawnLogged(
      'etcd',
      [
        ...['--name', 'cp', '--data-dir', join(dir, 'etcd')],
        ...['--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl],
        ...['--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl, '--initial-cluster', `cp=${peerUrl}`],
      ],
      join(dir, 'etcd.log'),
    );
    await waitUntil(`etcd on ${etcdUrl}`, 15_000, async () => (await fetch(`${etcdUrl}/health`)).ok);

    const server = `https://127.0.0.1:${apiPort}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(dir, 'certs', 'sa.key')}`,
      `--service-account-signing-key-file=${join(dir, 'certs', 'sa.key')}`,
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      '--endpoint-reconciler-type=none',
    ];
    const startApiServer = async () => {
      processes.apiserver = spawnLogged(bin, apiserverArgs, join(dir, 'apiserver.log'));
      const exited = processes.apiserver;
      await waitUntil(`kube-apiserver on ${server} (log: ${join(dir, 'apiserver.log')})`, 60_000, async () => {
        if (exited.exitCode !== null) throw new Error(`kube-apiserver exited with ${exited.exitCode}; see ${join(dir, 'apiserver.log')}`);
        return (await httpsStatus(`${server}/readyz`, adminToken)) === 200;
      });
    };
    await startApiServer();

    const kubeConfig = (token = adminToken) => {
      const config = new (loadClientNode().KubeConfig)();
      config.loadFromOptions({
        clusters: [{ name: 'local', server, skipTLSVerify: true }],
        users: [{ name: 'user', token }],
        contexts: [{ name: 'local', cluster: 'local', user: 'user' }],
        currentContext: 'local',
      });
      return config;
    };
    return {
      server,
      adminToken,
      dir,
      kubeConfig,
      stopApiServer: async () => {
        await stopProcess(processes.apiserver);
        processes.apiserver = undefined;
      },
      startApiServer,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function spawnLogged(command: string, args: string[], logPath: string): ChildProcess {
  const log = openSync(logPath, 'a');
  const child = spawn(command, args, { stdio: ['ignore', log, log] });
  closeSync(log);
  child.on('error', () => undefined); // reported through exitCode / readiness
  return child;
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const s = createServer();
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function httpsStatus(url: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
      if (err instanceof Error && /exited with/.test(err.message)) throw err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
