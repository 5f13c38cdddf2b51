/**
 * A TLS reverse proxy in front of the kube-apiserver that counts the requests one client (here the
 * worker's Kubernetes driver) makes, by verb and resource: the API server's own counters
 * (apiserver_request_total) cannot tell the driver from the emulator playing the kubelets.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** Requests so far by `VERB resource[/subresource]` (VERB as the API server names it: LIST, WATCH, CREATE...). */
  counts(): Record<string, number>;
  total(): number;
  close(): Promise<void>;
}

/** `GET /api/v1/namespaces/gantry/pods?watch=1` -> `WATCH pods`; `POST .../pods/x/eviction` -> `CREATE pods/eviction`. */
export function requestKey(method: string, url: string): string {
  const u = new URL(url, 'https://x');
  const parts = u.pathname.split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : parts;
  if (rest[0] === 'namespaces' && rest.length > 2) rest.splice(0, 2);
  const [resource = u.pathname, name, subresource] = rest;
  const watch = u.searchParams.get('watch') === '1' || u.searchParams.get('watch') === 'true';
  const verb =
    method === 'GET'
      ? watch
        ? 'WATCH'
        : name
          ? 'GET'
          : 'LIST'
      : (({ POST: 'CREATE', PUT: 'UPDATE', PATCH: 'PATCH', DELETE: name ? 'DELETE' : 'DELETECOLLECTION' } as Record<string, string>)[method] ?? method);
  return `${verb} ${resource}${subresource ? `/${subresource}` : ''}`;
}

export async function startCountingProxy(upstream: string, dir: string): Promise<CountingProxy> {
  const key = join(dir, 'proxy.key');
  const cert = join(dir, 'proxy.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], {
    stdio: 'ignore',
  });
  const counts = new Map<string, number>();
  const target = new URL(upstream);
  const server: Server = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const k = requestKey(req.method ?? 'GET', req.url ?? '/');
    counts.set(k, (counts.get(k) ?? 0) + 1);
    const up = request(
      {
        hostname: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
        rejectUnauthorized: false,
      },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
    res.on('close', () => up.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => Object.fromEntries([...counts.entries()].sort((a, b) => b[1] - a[1])),
    total: () => [...counts.values()].reduce((s, n) => s + n, 0),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
