/**
 * Serves one ClusterDriver over HTTP so that several worker processes drive the same cluster
 * and a worker crash leaves the cluster (and its running workloads) as it was, as a real
 * cluster would. Used for the simulated cluster in load and crash tests (`GANTRY_DRIVER=remote`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MigLayoutError } from '../shared/mig-layout';
import { logsOfMany } from '../shared/logs-many';
import { statusOfMany } from '../shared/status-many';
import { stopEach } from '../shared/stop-many';
import type { ClusterDriver, DriverEvent, JobLogRequest, StartRequest } from '../types';
import { isRemoteMethod, REMOTE_METHODS, type HostInfo, type RemoteMethod, type RpcError, type RpcResponse, type RpcStartOutcome } from './protocol';

export interface ClusterHost {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1 << 20;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) reject(new Error('request body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: RpcResponse | HostInfo): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function rpcError(e: unknown): RpcError {
  const err = e instanceof Error ? e : new Error(String(e));
  const mig = err instanceof MigLayoutError ? { model: err.model, violations: err.violations } : undefined;
  return { name: err.name, message: err.message, mig };
}

export async function serveDriver(driver: ClusterDriver, options: { port?: number; host?: string } = {}): Promise<ClusterHost> {
  const streams = new Set<ServerResponse>();
  const unsubscribe = driver.onEvent((e: DriverEvent) => {
    const frame = `data: ${JSON.stringify(e)}\n\n`;
    for (const s of streams) s.write(frame);
  });
  // statusMany, stopMany (and logsMany, with logs) are served for every driver: the helpers ask each job of one without them
  const capabilities = REMOTE_METHODS.filter(
    (m) =>
      m === 'statusMany' || m === 'stopMany' || (m === 'logsMany' && !!driver.logs) || typeof (driver as unknown as Record<string, unknown>)[m] === 'function',
  );
  /** Methods whose answer needs more than JSON of the driver's result. */
  const batched: Partial<Record<RemoteMethod, (args: unknown[]) => Promise<unknown>>> = {
    startMany: async (args) =>
      (await driver.startMany(args[0] as StartRequest[])).map((o): RpcStartOutcome =>
        o.ok ? { jobId: o.jobId, ok: true } : { jobId: o.jobId, ok: false, error: rpcError(o.error) },
      ),
    statusMany: (args) => statusOfMany(driver, args[0] as string[]),
    stopMany: async (args) => {
      const ids = args[0] as string[];
      const failed = new Map((await stopEach(driver, ids)).map((f) => [f.jobId, rpcError(f.error)]));
      return ids.map((id) => failed.get(id) ?? null);
    },
    logsMany: (args) => logsOfMany(driver, args[0] as JobLogRequest[]),
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && path === '/info') return send(res, 200, { driver: driver.name, capabilities });
    if (req.method === 'GET' && path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(': connected\n\n');
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    const m = /^\/rpc\/([A-Za-z]+)$/.exec(path);
    if (req.method !== 'POST' || !m) return send(res, 404, { error: { name: 'NotFound', message: `no route ${req.method} ${path}` } });
    const method = m[1]!;
    if (!isRemoteMethod(method) || !capabilities.includes(method)) {
      return send(res, 404, { error: { name: 'NotFound', message: `the ${driver.name} driver has no method ${method}` } });
    }
    void (async () => {
      try {
        const body = JSON.parse((await readBody(req)) || '{}') as { args?: unknown };
        const args = Array.isArray(body.args) ? body.args : [];
        const own = batched[method];
        const fn = (driver as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
        const result = own ? await own(args) : await fn.apply(driver, args);
        send(res, 200, { result: result ?? null });
      } catch (e) {
        send(res, 500, { error: rpcError(e) });
      }
    })();
  });
  // MIG changes, persona switches and reboots answer when done: no request timeout.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    async close() {
      unsubscribe();
      for (const s of streams) s.end();
      streams.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
