/**
 * The load benchmark's clients: `clients` keep-alive connections, opened and used once (GET
 * /healthz) before the clock starts, as the clients of a running service hold theirs. A
 * request's latency runs from the moment it is sent (closed loop) or due (open loop: `rate`
 * requests a second in all, whatever the answers take; a request that waits for a free
 * connection counts that wait) to its answer.
 *
 * autocannon, used before, started each connection's first request's clock before the
 * connection existed: with 200 connections opened at once on a busy machine the first requests
 * waited seconds for their connections, which was its p99.
 */
import { Agent, request } from 'node:http';

export interface Submission<T> {
  path: string;
  headers: Record<string, string>;
  body: string;
  item: T;
}

export interface GeneratorResult {
  /** Milliseconds, sorted. */
  latencies: number[];
  errors: number;
  timeouts: number;
}

const TIMEOUT_MS = 60_000;

export async function generateLoad<T>(o: {
  /** One API process's URL, or several (client i talks to urls[i % n], request i of an open loop goes to urls[i % n]). */
  url: string | readonly string[];
  clients: number;
  rate?: number;
  submissions: readonly Submission<T>[];
  onResponse: (status: number, body: string, item: T) => void;
}): Promise<GeneratorResult> {
  const targets = (typeof o.url === 'string' ? [o.url] : o.url).map((u) => new URL(u));
  // connections per API process: the clients spread over them
  const perTarget = Math.ceil(o.clients / targets.length);
  const agent = new Agent({ keepAlive: true, maxSockets: perTarget, maxFreeSockets: perTarget });
  const send = (to: number, method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = targets[to % targets.length]!;
      const req = request(
        { host: hostname, port, method, path, headers: body ? { ...headers, 'content-length': Buffer.byteLength(body) } : headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.setTimeout(TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
      req.on('error', reject);
      req.end(body);
    });
  try {
    // open every connection before the clock starts
    await Promise.all(Array.from({ length: o.clients }, (_, i) => send(i, 'GET', '/healthz', {}).catch(() => undefined)));
    const latencies: number[] = [];
    let errors = 0;
    let timeouts = 0;
    const one = async (to: number, s: Submission<T>, startedAt: number) => {
      try {
        const r = await send(to, 'POST', s.path, s.headers, s.body);
        latencies.push(performance.now() - startedAt);
        o.onResponse(r.status, r.body, s.item);
      } catch (e) {
        if ((e as { code?: string }).code === 'TIMEOUT') timeouts++;
        else errors++;
      }
    };
    if (o.rate) {
      // open loop: request i is due at i / rate seconds
      const t0 = performance.now();
      const inFlight: Promise<void>[] = [];
      for (let i = 0; i < o.submissions.length; i++) {
        const due = t0 + (i * 1000) / o.rate;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        inFlight.push(one(i, o.submissions[i]!, due));
      }
      await Promise.all(inFlight);
    } else {
      let next = 0;
      const lane = async (client: number) => {
        while (next < o.submissions.length) {
          const s = o.submissions[next++]!;
          await one(client, s, performance.now());
        }
      };
      await Promise.all(Array.from({ length: Math.min(o.clients, o.submissions.length) }, (_, client) => lane(client)));
    }
    latencies.sort((a, b) => a - b);
    return { latencies, errors, timeouts };
  } finally {
    agent.destroy();
  }
}
