/** The processes start.sh leaves running, by the pid files it writes in the control plane's dir. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ControlPlaneProcess = 'apiserver' | 'etcd';

export function recordedPid(dir: string, name: ControlPlaneProcess): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(join(dir, `${name}.pid`), 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once every pid is gone (bounded: never hangs). */
export async function terminate(pids: number[], graceMs = 5_000): Promise<void> {
  pids.forEach((pid) => signal(pid, 'SIGTERM'));
  const deadline = Date.now() + graceMs;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  pids.filter(alive).forEach((pid) => signal(pid, 'SIGKILL'));
  const killedBy = Date.now() + 2_000;
  while (pids.some(alive) && Date.now() < killedBy) await new Promise((r) => setTimeout(r, 20));
}
