#!/usr/bin/env node
/**
 * The emulator as its own process:
 *
 *   gantry-kube-emulator --kubeconfig FILE [--topology demo|demo-accelerators|FILE] [--speed N]
 *                        [--metrics-port 9400] [--control-port 9401] [--host 127.0.0.1]
 *                        [--mig-apply-seconds S] [--persona-switch-seconds S] [--start-seconds S]
 *
 * Runs until SIGINT or SIGTERM, then stops watching and leaves the cluster's objects in place.
 */
import { startEmulator, type EmulatorDelays, type EmulatorOptions } from './emulator';

const USAGE = `usage: gantry-kube-emulator --kubeconfig FILE [--topology demo|demo-accelerators|FILE] [--speed N] [--metrics-port P] [--control-port P] [--host H]
                            [--start-seconds S] [--sigterm-seconds S] [--mig-apply-seconds S] [--persona-switch-seconds S]`;

function parseArgs(argv: string[]): EmulatorOptions {
  const options: EmulatorOptions = { metricsPort: 9400, controlPort: 9401 };
  const delays: Partial<EmulatorDelays> = {};
  const number = (flag: string, value: string | undefined) => {
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${flag} needs a non-negative number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    switch (flag) {
      case '--':
        continue;
      case '--kubeconfig':
        options.kubeconfigPath = value;
        break;
      case '--topology':
        options.topology = value;
        break;
      case '--speed':
        options.speed = number(flag, value);
        break;
      case '--metrics-port':
        options.metricsPort = number(flag, value);
        break;
      case '--control-port':
        options.controlPort = number(flag, value);
        break;
      case '--host':
        options.host = value;
        break;
      case '--start-seconds':
        delays.startSeconds = number(flag, value);
        break;
      case '--sigterm-seconds':
        delays.sigtermSeconds = number(flag, value);
        break;
      case '--mig-apply-seconds':
        delays.migApplySeconds = number(flag, value);
        break;
      case '--persona-switch-seconds':
        delays.personaSwitchSeconds = number(flag, value);
        break;
      case '--help':
      case '-h':
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
    i++;
  }
  return { ...options, delays };
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const log = (message: string) => console.error(`${new Date().toISOString()} ${message}`);
  const emulator = await startEmulator({ ...options, log });
  const { created, adopted, ms } = emulator.registration;
  log(`kube-emulator: ${emulator.nodes.size} nodes (${created} registered, ${adopted} adopted) in ${ms} ms`);
  if (emulator.metricsUrl) log(`kube-emulator: dcgm-exporter metrics at ${emulator.metricsUrl}`);
  if (emulator.controlUrl) log(`kube-emulator: control API at ${emulator.controlUrl} (POST /v1/faults, GET /v1/nodes)`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`kube-emulator: ${signal}, stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    emulator.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(`kube-emulator: ${(err as Error).message}`);
  process.exit(1);
});
