/**
 * @kubernetes/client-node 1.x, loaded on demand (an ES-module package, required through
 * require(esm) on Node >= 20.19), with one keep-alive connection pool per KubeConfig.
 *
 * Why the pool (the driver's connection-pool.ts): client-node 1.4 builds a new https.Agent for
 * every request, so every call pays a TLS handshake; registering a thousand nodes that way costs
 * seconds of CPU on both sides.
 */
import { closeConnectionPool, withConnectionPool } from '@gantry/driver';
import type * as K8s from '@kubernetes/client-node';

export type ClientNode = typeof K8s;

export function loadClientNode(): ClientNode {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES-module package, loaded on demand through require(esm)
  return require('@kubernetes/client-node') as ClientNode;
}

/** A KubeConfig from a file, or the default chain; its requests share keep-alive connections. */
export function loadKubeConfig(path?: string, maxSockets = 64): K8s.KubeConfig {
  const config = new (loadClientNode().KubeConfig)();
  if (path) config.loadFromFile(path);
  else config.loadFromDefault();
  return withConnectionPool(config, maxSockets);
}

export { closeConnectionPool, withConnectionPool };

export function httpStatusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** Typed API handles and the patch content types the emulator uses. */
export interface KubeClients {
  config: K8s.KubeConfig;
  core: K8s.CoreV1Api;
  coordination: K8s.CoordinationV1Api;
  /** `application/merge-patch+json` */
  mergePatch: K8s.ConfigurationOptions;
  /** `application/strategic-merge-patch+json`: lists such as conditions and taints merge by key. */
  strategicPatch: K8s.ConfigurationOptions;
  k8s: ClientNode;
}

export function kubeClients(config: K8s.KubeConfig): KubeClients {
  const k8s = loadClientNode();
  return {
    config,
    core: config.makeApiClient(k8s.CoreV1Api),
    coordination: config.makeApiClient(k8s.CoordinationV1Api),
    mergePatch: k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    strategicPatch: k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
    k8s,
  };
}

/** Runs `call`, treating 404 Not Found as done (false). */
export async function ignoringNotFound(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (err) {
    if (httpStatusOf(err) === 404) return false;
    throw err;
  }
}
