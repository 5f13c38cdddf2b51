/**
 * Test harness: a real control plane, an emulator on it, an API client for the test's own
 * calls, and bounded waits. Teardown always runs every step (emulator, then control plane), each
 * bounded, whatever the test did.
 */
import type { Topology } from '@gantry/driver';
import { startControlPlane, type ControlPlane } from '@gantry/kube-control-plane';
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startEmulator, type Emulator, type EmulatorOptions } from '../emulator';
import { closeConnectionPool, kubeClients, loadKubeConfig, type KubeClients } from '../kube/client';

export interface Cluster {
  controlPlane: ControlPlane;
  config: KubeConfig;
  clients: KubeClients;
  core: CoreV1Api;
}

export async function startCluster(): Promise<Cluster> {
  const controlPlane = await startControlPlane();
  const config = loadKubeConfig(controlPlane.kubeconfigPath, 16);
  const clients = kubeClients(config);
  return { controlPlane, config, clients, core: clients.core };
}

export function emulatorOn(cluster: Cluster, options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({
    kubeconfigPath: cluster.controlPlane.kubeconfigPath,
    leaseRenewSeconds: 1,
    nodeStatusSeconds: 2,
    log: () => undefined,
    ...options,
    delays: { startSeconds: 0.2, sigtermSeconds: 0.5, migApplySeconds: 0.3, personaSwitchSeconds: 0.5, ...options.delays },
  });
}

/** Stops what is given, each step bounded by 15 s, never throwing. */
export async function teardown(emulators: (Emulator | undefined)[], cluster: Cluster | undefined): Promise<void> {
  const bounded = (what: string, step: () => Promise<void>) =>
    Promise.race([step(), new Promise<void>((resolve) => setTimeout(resolve, 15_000).unref())]).catch((err: unknown) =>
      process.emitWarning(`teardown: ${what} failed: ${(err as Error).message}`),
    );
  for (const emulator of emulators) if (emulator) await bounded('stopping the emulator', () => emulator.stop());
  if (cluster) {
    closeConnectionPool(cluster.config);
    await bounded('stopping the control plane', () => cluster.controlPlane.stop());
  }
}

/** Polls `check` until it returns a value other than undefined; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One spine, one leaf, `nodes` nodes of `gpus` GPUs of `model`. */
export function smallTopology(nodes = 2, gpus = 8, model = 'H100-80GB'): Topology {
  return {
    name: 'test',
    spines: [
      {
        name: 'spine-t',
        leaves: [
          {
            name: 'leaf-t',
            nodes: Array.from({ length: nodes }, (_, i) => ({
              name: `gpu-node-${i}`,
              cpuMilli: 128000,
              memoryMiB: 1048576,
              labels: { 'example.com/rack': 'r1' },
              gpus: Array.from({ length: gpus }, () => ({ model, memoryMiB: 81559, nvlinkDomain: 0 })),
            })),
          },
        ],
      },
    ],
  };
}

export async function ensureNamespace(core: CoreV1Api, name: string): Promise<void> {
  try {
    await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}
