/**
 * The emulator's control API (docs/kube-emulator.md):
 *
 *   GET  /healthz      200 "ok"
 *   GET  /v1/nodes     the emulated hardware: readiness, NIC, persona, MIG layouts, GPU health
 *   POST /v1/faults    { nodeName, kind: xid | nic-down | node-down | latent | recover, gpuIndex?, xid? }
 *                      (the body of Gantry's POST /v1/sim/faults) -> 204; 400 bad body; 404 unknown node
 *   POST /v1/repairs   { nodeName, gpuIndex? }: a GPU reset (gpuIndex) or a node reboot, the incident
 *                      loop's remediation: like recover, but a latent defect survives it -> 204; 400; 404
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultInjection } from '@gantry/driver';
import type { EmulatedNode } from '../cluster/emulated-node';
import { FaultError } from '../health/health-reporter';
import { sendJson } from './http-server';

const KINDS: readonly FaultInjection['kind'][] = ['xid', 'nic-down', 'node-down', 'latent', 'recover'];

export interface ControlApiDeps {
  nodes: ReadonlyMap<string, EmulatedNode>;
  injectFault: (fault: FaultInjection) => Promise<void>;
  /** A GPU reset or node reboot (HealthReporter.repair). */
  repair: (nodeName: string, gpuIndex?: number) => Promise<void>;
}

/** The fault in a request body, or the reason it is not one. */
export function parseFault(body: unknown): { ok: true; fault: FaultInjection } | { ok: false; message: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, message: 'the body must be a JSON object' };
  const { nodeName, kind, gpuIndex, xid, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return { ok: false, message: `unknown field ${unknown[0]}` };
  if (typeof nodeName !== 'string' || nodeName === '') return { ok: false, message: 'nodeName: a node name is required' };
  if (!KINDS.includes(kind as FaultInjection['kind'])) return { ok: false, message: `kind: one of ${KINDS.join(', ')}` };
  const isIndex = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isInteger(v) && v >= 0);
  if (!isIndex(gpuIndex)) return { ok: false, message: 'gpuIndex: a non-negative integer' };
  if (!isIndex(xid)) return { ok: false, message: 'xid: a non-negative integer' };
  if ((kind === 'xid' || kind === 'latent') && gpuIndex === undefined) return { ok: false, message: `gpuIndex: required for an ${kind} fault` };
  const fault: FaultInjection = { nodeName, kind: kind as FaultInjection['kind'] };
  if (gpuIndex !== undefined) fault.gpuIndex = gpuIndex as number;
  if (xid !== undefined) fault.xid = xid as number;
  return { ok: true, fault };
}

/** A repair in a request body (`{ nodeName, gpuIndex? }`), or the reason it is not one. */
export function parseRepair(body: unknown): { ok: true; nodeName: string; gpuIndex?: number } | { ok: false; message: string } {
  if (typeof body === 'object' && body !== null && 'xid' in body) return { ok: false, message: 'unknown field xid' };
  const parsed = parseFault(typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, kind: 'recover' } : body);
  if (!parsed.ok) return parsed;
  return { ok: true, nodeName: parsed.fault.nodeName, ...(parsed.fault.gpuIndex === undefined ? {} : { gpuIndex: parsed.fault.gpuIndex }) };
}

export function nodeSummary(node: EmulatedNode) {
  return {
    name: node.name,
    leaf: node.leaf,
    spine: node.spine,
    ready: !node.down,
    networkUp: !node.nicDown,
    persona: node.persona,
    switchingPersona: node.switchingPersona,
    migConfig: node.appliedMigConfig || undefined,
    gpus: node.gpus.map((g) => ({
      index: g.index,
      model: g.model,
      uuid: g.uuid,
      healthy: g.healthy,
      lastXid: g.lastXid || undefined,
      latentFault: g.latentFault || undefined,
      migLayout: g.migLayout,
    })),
  };
}

export function controlApiHandler(deps: ControlApiDeps) {
  return async (req: IncomingMessage, res: ServerResponse, body: string): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    const route = `${req.method} ${path}`;
    if (route === 'GET /healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('ok');
    }
    if (route === 'GET /v1/nodes') return sendJson(res, 200, { items: [...deps.nodes.values()].map(nodeSummary) });
    if (route === 'POST /v1/faults' || route === 'POST /v1/repairs') {
      let parsed: unknown;
      try {
        parsed = body ? JSON.parse(body) : undefined;
      } catch {
        return sendJson(res, 400, { error: { code: 'validation_failed', message: 'the body is not JSON' } });
      }
      const asked = route === 'POST /v1/faults' ? parseFault(parsed) : parseRepair(parsed);
      if (!asked.ok) return sendJson(res, 400, { error: { code: 'validation_failed', message: asked.message } });
      const nodeName = 'fault' in asked ? asked.fault.nodeName : asked.nodeName;
      if (!deps.nodes.has(nodeName)) return sendJson(res, 404, { error: { code: 'not_found', message: `no emulated node named ${nodeName}` } });
      try {
        await ('fault' in asked ? deps.injectFault(asked.fault) : deps.repair(nodeName, asked.gpuIndex));
      } catch (err) {
        if (err instanceof FaultError) return sendJson(res, 400, { error: { code: 'validation_failed', message: err.message } });
        throw err;
      }
      res.writeHead(204);
      return void res.end();
    }
    sendJson(res, 404, { error: { code: 'not_found', message: `no route ${route}` } });
  };
}
