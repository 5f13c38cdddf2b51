/**
 * Bare metal on Kubernetes (docs/bare-metal.md): the node leaves the cluster's schedulable pool
 * (cordoned, labelled `gantry.io/bare-metal` and `gantry.io/bare-metal-lease`) and a provisioning
 * hook does the rest: a command (the step as JSON on stdin and in GANTRY_BARE_METAL_* variables;
 * exit 0 = done) or a webhook (the step POSTed as JSON; a 2xx answer = done), e.g. a script that
 * drives Metal3/Ironic (a BareMetalHost's image and online flag) or MAAS (deploy, power, release
 * with disk erase). Without a hook the labels are the whole contract: a controller that watches
 * them does the work.
 */
import { spawn } from 'node:child_process';
import type { BareMetalNodeStatus, BareMetalOperation } from '../types';
import type { NodePatch } from './node-patches';

export const BARE_METAL_LABELS = {
  /** The node's bare-metal status (provisioning, deployed, powered-off, deprovisioning...). */
  state: 'gantry.io/bare-metal',
  /** The lease that holds the node. */
  lease: 'gantry.io/bare-metal-lease',
} as const;

export const BARE_METAL_ANNOTATIONS = {
  /** The OS image the node is provisioned with. */
  image: 'gantry.io/bare-metal-image',
} as const;

export interface BareMetalHook {
  /** Run with `sh -c`; the step on stdin (JSON) and in GANTRY_BARE_METAL_ACTION / _NODE / _LEASE / _IMAGE. */
  command?: string;
  /** POSTed the step as JSON. */
  url?: string;
  /** Longest a step may take (default 3600 s: a provisioning writes a disk image). */
  timeoutSeconds?: number;
}

/** What the hook receives. */
export interface BareMetalHookPayload {
  action: BareMetalOperation['action'];
  node: string;
  leaseId: string;
  image?: string;
}

const DURING: Record<BareMetalOperation['action'], BareMetalNodeStatus> = {
  provision: 'provisioning',
  'power-off': 'powering-off',
  'power-on': 'powering-on',
  deprovision: 'deprovisioning',
};
const AFTER: Record<BareMetalOperation['action'], BareMetalNodeStatus | null> = {
  provision: 'deployed',
  'power-off': 'powered-off',
  'power-on': 'deployed',
  deprovision: null,
};

/** The node while a step runs: cordoned and labelled (the lease and the image on provision). */
export function bareMetalStartPatch(op: BareMetalOperation): NodePatch {
  return {
    spec: { unschedulable: true },
    metadata: {
      labels: { [BARE_METAL_LABELS.state]: DURING[op.action], [BARE_METAL_LABELS.lease]: op.leaseId },
      ...(op.action === 'provision' ? { annotations: { [BARE_METAL_ANNOTATIONS.image]: op.image } } : {}),
    },
  };
}

/** The node once the step is done; after `deprovision` it is back in the pool (labels gone, uncordoned). */
export function bareMetalDonePatch(op: BareMetalOperation): NodePatch {
  const after = AFTER[op.action];
  if (after === null) {
    return {
      spec: { unschedulable: false },
      metadata: { labels: { [BARE_METAL_LABELS.state]: null, [BARE_METAL_LABELS.lease]: null }, annotations: { [BARE_METAL_ANNOTATIONS.image]: null } },
    };
  }
  return { spec: { unschedulable: true }, metadata: { labels: { [BARE_METAL_LABELS.state]: after } } };
}

/** Whether the node already shows the end of this step (a retried step is not run twice). */
export function bareMetalStepDone(labels: Record<string, string> | undefined, op: BareMetalOperation): boolean {
  const after = AFTER[op.action];
  const state = labels?.[BARE_METAL_LABELS.state];
  if (after === null) return state === undefined;
  return state === after && labels?.[BARE_METAL_LABELS.lease] === op.leaseId;
}

export function hookPayload(nodeName: string, op: BareMetalOperation): BareMetalHookPayload {
  return { action: op.action, node: nodeName, leaseId: op.leaseId, ...(op.action === 'provision' ? { image: op.image } : {}) };
}

/** Runs the hook for one step; resolves when it reports the step done, rejects with its output otherwise. */
export async function runBareMetalHook(hook: BareMetalHook, payload: BareMetalHookPayload): Promise<void> {
  const timeoutMs = (hook.timeoutSeconds ?? 3600) * 1000;
  if (hook.command) await runCommand(hook.command, payload, timeoutMs);
  if (hook.url) await postWebhook(hook.url, payload, timeoutMs);
}

function runCommand(command: string, payload: BareMetalHookPayload, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], {
      stdio: ['pipe', 'ignore', 'pipe'],
      env: {
        ...process.env,
        GANTRY_BARE_METAL_ACTION: payload.action,
        GANTRY_BARE_METAL_NODE: payload.node,
        GANTRY_BARE_METAL_LEASE: payload.leaseId,
        GANTRY_BARE_METAL_IMAGE: payload.image ?? '',
      },
      timeout: timeoutMs,
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`bare-metal hook (${payload.action} ${payload.node}) ${signal ? `killed by ${signal}` : `exited ${code}`}: ${stderr.trim()}`));
    });
    // a hook that exits without reading its stdin closes the pipe (EPIPE): its exit code decides
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(payload));
  });
}

async function postWebhook(url: string, payload: BareMetalHookPayload, timeoutMs: number): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`bare-metal webhook (${payload.action} ${payload.node}) answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
}
