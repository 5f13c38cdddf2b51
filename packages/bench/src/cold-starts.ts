/**
 * Cold starts of an inference endpoint against a running Gantry (API + worker):
 * creates an endpoint that scales to zero after 1 s idle, then N times waits for zero replicas,
 * sends one request (the activator holds it while a replica is placed and loads its model) and
 * measures the answer time end to end; p50/p95 client-side and as recorded by the API.
 *
 *   pnpm --silent bench cold-starts --api http://127.0.0.1:4000 --key gk_... --team <teamId> [--events 20] [--warm-pool 0|1]
 *
 * Run the worker with GANTRY_SIM_SPEED=1: the simulated start (1 s) and model load (3 s) scale with it.
 */
import { percentile as pct, sleep } from './waiting';

export interface ColdStartOptions {
  api: string;
  key: string;
  teamId: string;
  events: number;
  warmPool: number;
  gpuModel?: string;
}

export interface ColdStartReport {
  bench: 'cold-starts';
  events: number;
  warmPool: number;
  clientP50Ms: number;
  clientP95Ms: number;
  clientMaxMs: number;
  apiP50Ms: number | null;
  apiP95Ms: number | null;
  underFiveSeconds: number;
}

export async function runColdStarts(o: ColdStartOptions, log: (s: string) => void): Promise<ColdStartReport> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${o.api}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const ep = await call('POST', '/v1/endpoints', {
    teamId: o.teamId,
    name: `bench-cold-${Date.now()}`,
    model: 'bench-model',
    resources: { gpus: 1, ...(o.gpuModel ? { gpuModel: o.gpuModel } : {}) },
    minReplicas: 0,
    maxReplicas: 1,
    scaleToZeroAfterSeconds: 1,
    warmPool: o.warmPool,
  });
  const durations: number[] = [];
  try {
    for (let i = 0; i < o.events; i++) {
      // Wait for zero serving replicas (and, with a warm pool, for the pool to be refilled and loaded).
      for (;;) {
        const d = await call('GET', `/v1/endpoints/${ep.id}`);
        if (
          d.replicas.ready === 0 &&
          d.replicas.starting === 0 &&
          d.replicaList.filter((r: { serving: boolean; state: string }) => !r.serving && r.state === 'ready').length >= o.warmPool
        )
          break;
        await sleep(200);
      }
      const t0 = performance.now();
      const r = await call('POST', `/v1/endpoints/${ep.id}/invoke`, { input: `bench ${i}` });
      const ms = performance.now() - t0;
      if (!r.coldStart) throw new Error(`request ${i} was not a cold start`);
      durations.push(ms);
      log(`cold start ${i + 1}/${o.events}: ${Math.round(ms)} ms end to end (activator held ${r.waitedMs} ms)`);
    }
    const d = await call('GET', `/v1/endpoints/${ep.id}`);
    const sorted = [...durations].sort((a, b) => a - b);
    return {
      bench: 'cold-starts',
      events: durations.length,
      warmPool: o.warmPool,
      clientP50Ms: Math.round(pct(sorted, 50)),
      clientP95Ms: Math.round(pct(sorted, 95)),
      clientMaxMs: Math.round(sorted[sorted.length - 1]!),
      apiP50Ms: d.coldStarts.p50Ms,
      apiP95Ms: d.coldStarts.p95Ms,
      underFiveSeconds: durations.filter((x) => x < 5000).length,
    };
  } finally {
    await call('DELETE', `/v1/endpoints/${ep.id}`).catch(() => undefined);
  }
}

/** CLI entry: prints progress on stderr and one JSON line on stdout. */
export function coldStartsCommand(opts: Record<string, string>, log: (s: string) => void): void {
  if (!opts.key || !opts.team) {
    process.stderr.write(
      'usage: bench cold-starts --api http://127.0.0.1:4000 --key gk_... --team <teamId> [--events 20] [--warm-pool 0] [--gpu-model H100-80GB]\n',
    );
    process.exitCode = 2;
    return;
  }
  runColdStarts(
    {
      api: opts.api ?? 'http://127.0.0.1:4000',
      key: opts.key,
      teamId: opts.team,
      events: Number(opts.events ?? 20),
      warmPool: Number(opts['warm-pool'] ?? 0),
      gpuModel: opts['gpu-model'],
    },
    log,
  ).then(
    (r) => process.stdout.write(JSON.stringify(r) + '\n'),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
