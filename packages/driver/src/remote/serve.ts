#!/usr/bin/env node
/**
 * Runs a simulated cluster as its own process, for several workers to share:
 *
 *   GANTRY_SIM_CLUSTER=topology.json GANTRY_SIM_SPEED=60 node packages/driver/dist/remote/serve.js --port 4300
 *
 * Workers then use GANTRY_DRIVER=remote GANTRY_DRIVER_URL=http://127.0.0.1:4300.
 * Delays may be overridden with GANTRY_SIM_DELAYS='{"startSeconds":0,...}' (simulated seconds).
 */
import { createDriver } from '../create-driver';
import type { SimulatedDelays } from '../simulated/simulated-driver';
import { serveDriver } from './cluster-host';

async function main(): Promise<void> {
  const i = process.argv.indexOf('--port');
  const port = i >= 0 ? Number(process.argv[i + 1]) : Number(process.env.GANTRY_SIM_PORT ?? 4300);
  const delays = process.env.GANTRY_SIM_DELAYS ? (JSON.parse(process.env.GANTRY_SIM_DELAYS) as Partial<SimulatedDelays>) : undefined;
  const driver = createDriver({
    driver: 'simulated',
    simCluster: process.env.GANTRY_SIM_CLUSTER,
    simSpeed: process.env.GANTRY_SIM_SPEED ? Number(process.env.GANTRY_SIM_SPEED) : undefined,
    simDelays: delays,
  });
  const host = await serveDriver(driver, { port });
  process.stdout.write(`simulated cluster served at ${host.url}\n`);
  const stop = () =>
    void host
      .close()
      .then(() => driver.close())
      .then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`cluster host failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
