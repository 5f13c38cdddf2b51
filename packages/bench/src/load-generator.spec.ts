import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateLoad } from './load-generator';

/** An HTTP server that answers 201 and counts the POSTs it got, and the connections it was opened on. */
async function countingServer(): Promise<{ url: string; posts: () => number; connections: () => number; close: () => Promise<void> }> {
  let posts = 0;
  let connections = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') posts++;
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end('{"id":"x"}');
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, posts: () => posts, connections: () => connections, close: () => new Promise((r) => server.close(() => r())) };
}

describe('bench load: the clients', () => {
  it('spreads the clients and their submissions over several API processes, closed and open loop', async () => {
    const [a, b] = [await countingServer(), await countingServer()];
    try {
      const submissions = Array.from({ length: 40 }, (_, i) => ({ path: '/v1/jobs', headers: {}, body: '{}', item: i }));
      let answered = 0;
      const closed = await generateLoad({ url: [a.url, b.url], clients: 4, submissions, onResponse: (status) => void (status === 201 && answered++) });
      expect(answered).toBe(40);
      expect(closed.latencies).toHaveLength(40);
      expect(a.posts()).toBeGreaterThan(0);
      expect(b.posts()).toBeGreaterThan(0);
      expect(a.connections()).toBe(2); // 4 clients, 2 kept-alive connections to each
      expect(b.connections()).toBe(2);
      const before = a.posts();
      await generateLoad({ url: [a.url, b.url], clients: 4, rate: 400, submissions, onResponse: () => undefined });
      expect(a.posts() + b.posts()).toBe(80);
      expect(a.posts() - before).toBe(20); // request i of the open loop goes to API i % 2
    } finally {
      await a.close();
      await b.close();
    }
  });
});
