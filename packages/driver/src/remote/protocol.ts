/**
 * Wire protocol between a cluster host (a process that owns one simulated cluster) and the
 * workers that drive it: every ClusterDriver method is `POST /rpc/<method>` with `{ args }`,
 * answered `{ result }` or `{ error }`; driver events stream from `GET /events` as server-sent
 * events, to every connected worker, like a Kubernetes watch.
 */
import type { MigLayoutViolation } from '../shared/mig-layout';
import type { ClusterDriver } from '../types';

/** The ClusterDriver methods a remote worker may call. */
export const REMOTE_METHODS = [
  'discover',
  'discoverNode',
  'applyMigLayout',
  'setPersona',
  'setPower',
  'cordon',
  'uncordon',
  'drain',
  'start',
  'startMany',
  'stop',
  'stopMany',
  'suspend',
  'status',
  'statusMany',
  'metrics',
  'logs',
  'logsMany',
  'injectFault',
  'resetGpu',
  'rebootNode',
  'bareMetal',
] as const satisfies readonly (keyof ClusterDriver)[];

export type RemoteMethod = (typeof REMOTE_METHODS)[number];

export function isRemoteMethod(name: string): name is RemoteMethod {
  return (REMOTE_METHODS as readonly string[]).includes(name);
}

/** A startMany() outcome on the wire: a refusal carries its error as an RpcError. */
export type RpcStartOutcome = { jobId: string; ok: true } | { jobId: string; ok: false; error: RpcError };

export interface RpcRequest {
  args: unknown[];
}

/** An error of the hosted driver; `mig` carries a MigLayoutError's details so the worker gets the same error class. */
export interface RpcError {
  name: string;
  message: string;
  mig?: { model: string; violations: MigLayoutViolation[] };
}

export type RpcResponse = { result: unknown } | { error: RpcError };

export interface HostInfo {
  driver: ClusterDriver['name'];
  /** Optional methods the hosted driver implements. */
  capabilities: RemoteMethod[];
}
