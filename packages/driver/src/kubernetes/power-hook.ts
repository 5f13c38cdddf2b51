/**
 * The power hook of the Kubernetes driver: Kubernetes cannot switch a machine on or off, so the
 * operator wires Gantry to whatever can (IPMI, Redfish, MAAS, a cloud API) with a command or a
 * webhook (docs/power.md). The command runs as `/bin/sh -c "<command>" gantry-power <on|off> <node>`
 * ($1 the action, $2 the node; also GANTRY_POWER_ACTION and GANTRY_POWER_NODE in its
 * environment) and succeeds with exit 0; the webhook gets `POST {"node", "action"}` and
 * succeeds with a 2xx answer.
 */
import { execFile } from 'node:child_process';
import { GANTRY_LABELS } from '../shared/labels';
import type { NodePowerState } from '../types';
import type { NodePatch } from './node-patches';

export interface PowerHook {
  /** A shell command (GANTRY_POWER_COMMAND). */
  command?: string;
  /** An http(s) URL (GANTRY_POWER_WEBHOOK_URL). */
  webhookUrl?: string;
  /** How long one call may take. Default 120 s. */
  timeoutSeconds?: number;
}

export class PowerHookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PowerHookError';
  }
}

/** Runs the hook for one node; rejects naming the node, the action and what went wrong. */
export async function runPowerHook(hook: PowerHook | undefined, nodeName: string, action: 'on' | 'off'): Promise<void> {
  const timeoutMs = (hook?.timeoutSeconds ?? 120) * 1000;
  if (hook?.command) {
    await new Promise<void>((resolve, reject) => {
      execFile(
        '/bin/sh',
        ['-c', hook.command!, 'gantry-power', action, nodeName],
        { timeout: timeoutMs, env: { ...process.env, GANTRY_POWER_ACTION: action, GANTRY_POWER_NODE: nodeName } },
        (err, _stdout, stderr) => {
          if (!err) return resolve();
          const why = stderr.trim().split('\n').pop() || err.message;
          reject(new PowerHookError(`power ${action} of node ${nodeName}: the power command failed (${why})`));
        },
      );
    });
    return;
  }
  if (hook?.webhookUrl) {
    let res: Response;
    try {
      res = await fetch(hook.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ node: nodeName, action }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      throw new PowerHookError(`power ${action} of node ${nodeName}: the power webhook is unreachable (${e instanceof Error ? e.message : String(e)})`);
    }
    if (!res.ok) throw new PowerHookError(`power ${action} of node ${nodeName}: the power webhook answered ${res.status}`);
    return;
  }
  throw new PowerHookError(
    `power ${action} of node ${nodeName}: no power hook is configured (set GANTRY_POWER_COMMAND or GANTRY_POWER_WEBHOOK_URL, docs/power.md)`,
  );
}

/** Labels the node with its power state (and cordons it unless it is on). */
export function powerPatch(state: NodePowerState): NodePatch {
  return { metadata: { labels: { [GANTRY_LABELS.powerState]: state } }, spec: { unschedulable: state !== 'on' } };
}

const STATES: readonly NodePowerState[] = ['on', 'powering-down', 'off', 'powering-up'];

/** The power state a node's label says (no label, or an unknown value: on). */
export function powerStateOfLabels(labels: Record<string, string>): NodePowerState {
  const v = labels[GANTRY_LABELS.powerState] as NodePowerState | undefined;
  return v && STATES.includes(v) ? v : 'on';
}
