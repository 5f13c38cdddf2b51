/**
 * The driver's keep-alive pool under contention: every answer read as the server sent it. A
 * chunked answer (as kube-apiserver sends) whose socket went straight to a waiting request used
 * to fail in node-fetch with "Premature close"; a pod create that had succeeded was then sent again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeApi, loadClientNode } from './kube-api';
import { closeConnectionPool, withConnectionPool } from './connection-pool';
import { warmUpClientNode, WARM_UP_TIMEOUT_MS } from './__tests__/warm-up';

describe('connection pool', () => {
  let server: Server;
  let posts = 0;
  let url = '';

  beforeAll(async () => {
    await warmUpClientNode();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        posts++;
        const pod = JSON.parse(body) as { metadata: { name: string } };
        // chunked, no content-length, in two writes: what the API server streams
        res.writeHead(201, { 'content-type': 'application/json' });
        res.write(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"${pod.metadata.name}",`);
        setImmediate(() => res.end(`"namespace":"gantry","uid":"u-${pod.metadata.name}"}}`));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, WARM_UP_TIMEOUT_MS);

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('creates 300 pods over 4 pooled sockets with one request each: no answer read as cut short, nothing sent twice', async () => {
    const k8s = loadClientNode();
    const config = new k8s.KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    withConnectionPool(config, 4);
    const api = new KubeApi(config, { retryTimeoutMs: 5_000 });
    try {
      const created = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          api.createPod({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: 'gantry' }, spec: { containers: [] } }),
        ),
      );
      expect(created.every(Boolean)).toBe(true);
      expect(posts).toBe(300);
    } finally {
      closeConnectionPool(config);
    }
  });
});
