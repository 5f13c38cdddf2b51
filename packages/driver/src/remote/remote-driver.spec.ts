import { demoTopology } from '../simulated/generate-topology';
import { SimulatedDriver } from '../simulated/simulated-driver';
import type { DriverEvent } from '../types';
import { serveDriver } from './cluster-host';
import { RemoteDriver, RemoteDriverError } from './remote-driver';

const until = async (fn: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('remote driver: several workers, one cluster', () => {
  it('shares one cluster between two workers and outlives either of them', async () => {
    const sim = new SimulatedDriver({ topology: demoTopology(), speed: 100, heartbeats: false });
    const host = await serveDriver(sim);
    const a = new RemoteDriver({ url: host.url });
    const b = new RemoteDriver({ url: host.url });
    try {
      const node = (await a.discover()).nodes[0]!;
      await a.start({ jobId: 'j1', kind: 'training', replicas: [{ replica: 0, nodeName: node.name, gpus: [{ index: 0 }] }] });
      await a.close(); // the worker that started the job dies
      expect((await b.status('j1')).state).toBe('running');
      await b.stop('j1');
      expect((await b.status('j1')).state).not.toBe('running');
    } finally {
      await b.close();
      await host.close();
      await sim.close();
    }
  });

  it("reports the hosted driver's errors with their message", async () => {
    const sim = new SimulatedDriver({ topology: demoTopology(), speed: 100, heartbeats: false });
    const host = await serveDriver(sim);
    const d = new RemoteDriver({ url: host.url });
    try {
      await expect(d.cordon('no-such-node')).rejects.toThrow(/no-such-node/);
    } finally {
      await d.close();
      await host.close();
      await sim.close();
    }
  });

  it("starts a batch in one request: a refused start fails only its own job, with the host's error", async () => {
    const sim = new SimulatedDriver({ topology: demoTopology(), speed: 100, heartbeats: false });
    const host = await serveDriver(sim);
    const d = new RemoteDriver({ url: host.url });
    try {
      const node = (await d.discover()).nodes[0]!;
      const on = (jobId: string, index: number) => ({ jobId, kind: 'batch' as const, replicas: [{ replica: 0, nodeName: node.name, gpus: [{ index }] }] });
      const outcomes = await d.startMany([on('a', 0), on('b', 0), on('c', 1)]);
      expect(outcomes.map((o) => [o.jobId, o.ok])).toEqual([
        ['a', true],
        ['b', false],
        ['c', true],
      ]);
      const refused = outcomes[1]!;
      expect(!refused.ok && refused.error).toBeInstanceOf(RemoteDriverError);
      expect(!refused.ok && refused.error.message).toMatch(/GPU 0 of node .* is held by job a/);
      const states = await d.statusMany(['a', 'b', 'c']);
      expect(states.map((s) => s.state)).toEqual(['running', 'unknown', 'running']);
      const logs = await d.logsMany([{ jobId: 'a' }, { jobId: 'never-started' }]);
      expect(logs).toHaveLength(2);
      expect(logs[0]!.lines.length).toBeGreaterThan(0);
      expect(logs[1]).toEqual({ lines: [], unavailable: [] });
      // the runs of a batch of ended jobs removed in one request; an unknown job is no failure
      const sent: string[] = [];
      const stop = sim.stop.bind(sim);
      sim.stop = (jobId: string) => (sent.push(jobId), jobId === 'c' ? Promise.reject(new Error('node unreachable')) : stop(jobId));
      const errors = await d.stopMany(['a', 'c', 'never-started']);
      expect(sent).toEqual(['a', 'c', 'never-started']);
      expect(errors.map((e) => e?.message ?? null)).toEqual([null, 'node unreachable', null]);
      expect((await d.status('a')).state).not.toBe('running');
    } finally {
      await d.close();
      await host.close();
      await sim.close();
    }
  });

  it('names the host when it cannot be reached', async () => {
    const d = new RemoteDriver({ url: 'http://127.0.0.1:9' });
    await expect(d.discover()).rejects.toBeInstanceOf(RemoteDriverError);
    await expect(d.discover()).rejects.toThrow(/127\.0\.0\.1:9 unreachable \(discover\)/);
    await d.close();
  });

  it('reconnects its event stream after the cluster host restarts', async () => {
    const sim = new SimulatedDriver({ topology: demoTopology(), speed: 100, heartbeats: false });
    let host = await serveDriver(sim);
    const port = Number(new URL(host.url).port);
    const d = new RemoteDriver({ url: host.url, reconnectMs: 50 });
    const seen: DriverEvent[] = [];
    d.onEvent((e) => seen.push(e));
    try {
      const node = (await d.discover()).nodes[1]!;
      await new Promise((r) => setTimeout(r, 100));
      await d.injectFault({ nodeName: node.name, kind: 'nic-down' });
      await until(() => seen.some((e) => e.type === 'nic-down'));
      await host.close();
      host = await serveDriver(sim, { port });
      await new Promise((r) => setTimeout(r, 300));
      await d.injectFault({ nodeName: node.name, kind: 'recover' });
      await until(() => seen.some((e) => e.type === 'nic-up'));
    } finally {
      await d.close();
      await host.close();
      await sim.close();
    }
  });
});
