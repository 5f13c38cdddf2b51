/**
 * Loopback ports for a control plane that no other test process on the machine holds: the kernel
 * hands them out (bind to port 0) and each is reserved with an exclusive file in the OS temp dir
 * until released, so parallel Jest workers (and packages) starting control planes never collide.
 */
import { closeSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PORT_RESERVATIONS_DIR = join(tmpdir(), 'gantry-kube-control-plane-ports');

export interface ControlPlanePorts {
  /** etcd's client port; its peer port is the next one (as start.sh uses). */
  etcd: number;
  apiServer: number;
  /** Every port held: etcd client, etcd peer, API server. */
  all: number[];
}

export async function reserveControlPlanePorts(attempts = 50): Promise<ControlPlanePorts> {
  mkdirSync(PORT_RESERVATIONS_DIR, { recursive: true });
  for (let attempt = 0; attempt < attempts; attempt++) {
    const etcd = await kernelFreePort();
    const apiServer = await kernelFreePort();
    const all = [etcd, etcd + 1, apiServer];
    if (new Set(all).size !== 3 || etcd + 1 > 65535) continue;
    if (!(await isFree(etcd + 1))) continue;
    const held: number[] = [];
    for (const port of all) {
      if (!reserve(port)) break;
      held.push(port);
    }
    if (held.length === all.length) return { etcd, apiServer, all };
    held.forEach(releasePort);
  }
  throw new Error(`no free ports for etcd and kube-apiserver after ${attempts} attempts`);
}

export function releasePort(port: number): void {
  try {
    unlinkSync(join(PORT_RESERVATIONS_DIR, String(port)));
  } catch {
    // already released
  }
}

function reserve(port: number): boolean {
  try {
    closeSync(openSync(join(PORT_RESERVATIONS_DIR, String(port)), 'wx'));
    return true;
  } catch {
    return false;
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
