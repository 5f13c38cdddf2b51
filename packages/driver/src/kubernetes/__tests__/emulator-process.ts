/**
 * The GPU cluster emulator (packages/kube-emulator) as its own process, the way it is deployed,
 * for the driver's tests (test helper). The driver cannot import the emulator's package (the
 * emulator depends on @gantry/driver); it runs the emulator's built CLI instead, so the emulator
 * must be built first (`pnpm build` does it; turbo runs the driver's tests after it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Topology } from '../../index';
import type { FaultInjection } from '../../types';

export const EMULATOR_CLI = resolve(__dirname, '..', '..', '..', '..', 'kube-emulator', 'dist', 'cli.js');

export interface EmulatorProcessOptions {
  kubeconfigPath: string;
  topology: Topology;
  /** Real seconds (the CLI's --start-seconds, --sigterm-seconds...). */
  delays?: { startSeconds?: number; sigtermSeconds?: number; migApplySeconds?: number; personaSwitchSeconds?: number };
  /** Time allowed to register the nodes and serve the control API. Default 90 s (a busy machine). */
  readyTimeoutMs?: number;
}

export interface EmulatorProcess {
  controlUrl: string;
  metricsUrl: string;
  injectFault(fault: FaultInjection): Promise<void>;
  /** SIGTERM, SIGKILL after 10 s; never throws. */
  stop(): Promise<void>;
}

export async function startEmulatorProcess(options: EmulatorProcessOptions): Promise<EmulatorProcess> {
  if (!existsSync(EMULATOR_CLI)) throw new Error(`the kube-emulator is not built (${EMULATOR_CLI}): run pnpm --filter @gantry/kube-emulator build`);
  const dir = mkdtempSync(join(tmpdir(), 'gantry-emulator-'));
  const topologyPath = join(dir, 'topology.json');
  writeFileSync(topologyPath, JSON.stringify(options.topology));
  const d = options.delays ?? {};
  const flags: [string, number | undefined][] = [
    ['--start-seconds', d.startSeconds],
    ['--sigterm-seconds', d.sigtermSeconds],
    ['--mig-apply-seconds', d.migApplySeconds],
    ['--persona-switch-seconds', d.personaSwitchSeconds],
  ];
  const args = [EMULATOR_CLI, '--kubeconfig', options.kubeconfigPath, '--topology', topologyPath, '--control-port', '0', '--metrics-port', '0'];
  for (const [flag, value] of flags) if (value !== undefined) args.push(flag, String(value));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  const stop = () => stopChild(child).finally(() => rmSync(dir, { recursive: true, force: true }));
  try {
    const urls = await new Promise<{ controlUrl: string; metricsUrl: string }>((resolveUrls, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the emulator was not ready in ${options.readyTimeoutMs ?? 90_000} ms`)),
        options.readyTimeoutMs ?? 90_000,
      );
      child.once('exit', (code) => reject(new Error(`the emulator exited with ${code}`)));
      child.stderr!.on('data', (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-20_000);
        const control = /control API at (http:\/\/\S+)/.exec(output);
        const metrics = /metrics at (http:\/\/\S+)/.exec(output);
        if (control && metrics) {
          clearTimeout(timer);
          resolveUrls({ controlUrl: control[1], metricsUrl: metrics[1] });
        }
      });
    });
    return {
      ...urls,
      injectFault: async (fault) => {
        const res = await fetch(`${urls.controlUrl}/v1/faults`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(fault),
        });
        if (res.status !== 204) throw new Error(`the emulator refused ${JSON.stringify(fault)}: ${res.status} ${await res.text()}`);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- emulator output ---\n${output.split('\n').slice(-20).join('\n')}`);
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolveStop();
    });
    child.kill('SIGTERM');
  });
}
