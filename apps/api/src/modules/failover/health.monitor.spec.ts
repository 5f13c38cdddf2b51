import type { DriverEvent } from '@gantry/driver';
import { HealthMonitor } from './health.monitor';

/** Detection: driver events become failover work; silence past the grace period is a node down. */
describe('HealthMonitor', () => {
  let listener: (e: DriverEvent) => void;
  let failover: jest.Mock;
  let monitor: HealthMonitor;

  /** A monitor booted with the nodes Postgres holds as up (`expectedToBeat`). */
  const boot = (expected: string[] = []) => {
    const driver = { onEvent: (l: (e: DriverEvent) => void) => ((listener = l), () => undefined) };
    const repo = { touchHeartbeats: jest.fn().mockResolvedValue(undefined), expectedToBeat: jest.fn().mockResolvedValue(expected) };
    monitor = new HealthMonitor(driver as never, { failover } as never, repo as never);
    monitor.onApplicationBootstrap();
  };

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
    failover = jest.fn().mockResolvedValue(undefined);
    boot();
  });
  afterEach(() => {
    monitor.beforeApplicationShutdown();
    jest.useRealTimers();
  });

  const beat = (nodeName: string) => listener({ type: 'heartbeat', nodeNames: [nodeName], at: Date.now() });
  /** `rounds` heartbeat intervals of 2 s in which `nodes` beat. */
  const beatFor = async (rounds: number, ...nodes: string[]) => {
    for (let i = 0; i < rounds; i++) {
      for (const n of nodes) beat(n);
      await jest.advanceTimersByTimeAsync(2000);
    }
  };
  const calls = () => failover.mock.calls.map(([p]) => p as { action: string; kind?: string; nodeName?: string; source?: string });

  it('declares a node down after it misses its heartbeats past the grace period, and up when they return', async () => {
    await beatFor(4, 'n1', 'n2');
    // n1 goes silent, n2 keeps beating: n1 is down after 3 intervals (6 s), not before
    await beatFor(2, 'n2');
    expect(calls().filter((c) => c.kind === 'node-down')).toHaveLength(0);
    await beatFor(3, 'n2');
    expect(calls().filter((c) => c.kind === 'node-down')).toEqual([
      expect.objectContaining({ action: 'fault', kind: 'node-down', nodeName: 'n1', source: 'heartbeat' }),
    ]);
    // reported once, however long it stays silent
    await jest.advanceTimersByTimeAsync(20_000);
    expect(calls().filter((c) => c.kind === 'node-down' && c.nodeName === 'n1')).toHaveLength(1);
    beat('n1');
    expect(calls().filter((c) => c.kind === 'node-up')).toEqual([expect.objectContaining({ nodeName: 'n1', source: 'heartbeat' })]);
  });

  it('finds a fast-beating node silent on time while every other node’s deadline is far off', async () => {
    // s1 and s2 beat every 10 s (grace 30 s); n2 joins at 20 s, beats every 2 s (grace 6 s) and goes silent after 24 s
    const downAt: number[] = [];
    for (let t = 0; t <= 40; t++) {
      if (t % 10 === 0) beat('s1');
      if (t % 10 === 5) beat('s2');
      if (t >= 20 && t <= 24 && t % 2 === 0) beat('n2');
      await jest.advanceTimersByTimeAsync(1000);
      if (calls().some((c) => c.kind === 'node-down') && !downAt.length) downAt.push(t);
    }
    expect(calls().filter((c) => c.kind === 'node-down')).toEqual([expect.objectContaining({ nodeName: 'n2' })]);
    // past its 6 s grace (30 s) and proven by a later beat of another node (s2 at 35 s)
    expect(downAt[0]).toBeGreaterThanOrEqual(30);
    expect(downAt[0]).toBeLessThanOrEqual(35);
  });

  it('watches from boot every node Postgres holds as up: one that never beats again is down after the grace period', async () => {
    monitor.beforeApplicationShutdown();
    boot(['n1', 'n2']);
    // n1 went down while no worker listened: it never beats; n2 does (grace: 3 x 5 s)
    await beatFor(7, 'n2');
    expect(calls().filter((c) => c.kind === 'node-down')).toHaveLength(0);
    await beatFor(3, 'n2');
    expect(calls().filter((c) => c.kind === 'node-down')).toEqual([expect.objectContaining({ nodeName: 'n1', source: 'heartbeat' })]);
  });

  it('turns Xid and NIC events into failover faults, and cluster-caused exits into job-lost checks', () => {
    listener({ type: 'xid', nodeName: 'n1', gpuIndex: 3, xid: 79, at: 5 });
    listener({ type: 'nic-down', nodeName: 'n1', at: 6 });
    listener({ type: 'job-exited', jobId: 'j1', exitCode: 137, reason: 'node-lost', at: 7 });
    listener({ type: 'job-exited', jobId: 'j2', exitCode: 1, reason: 'failed', at: 8 });
    expect(calls()).toEqual([
      expect.objectContaining({ action: 'fault', kind: 'xid', nodeName: 'n1', gpuIndex: 3, xid: 79, at: 5 }),
      expect.objectContaining({ action: 'fault', kind: 'nic-down', nodeName: 'n1' }),
      expect.objectContaining({ action: 'job-lost', jobId: 'j1', exitReason: 'node-lost' }),
    ]);
  });

  it('blames no node when the event stream lags behind the clock (every beat arrives late alike)', async () => {
    const nodes = ['a', 'b', 'c'];
    // each beat reaches the worker 8 s after the node sent it: past the 6 s grace by the clock
    for (let i = 0; i < 10; i++) {
      listener({ type: 'heartbeat', nodeNames: nodes, at: Date.now() - 8000 });
      await jest.advanceTimersByTimeAsync(2000);
    }
    expect(calls().filter((c) => c.kind === 'node-down')).toHaveLength(0);
    // the stream keeps flowing but one node's beats stop: that one is down
    for (let i = 0; i < 6; i++) {
      listener({ type: 'heartbeat', nodeNames: ['a', 'b'], at: Date.now() - 8000 });
      await jest.advanceTimersByTimeAsync(2000);
    }
    expect(calls().filter((c) => c.kind === 'node-down')).toEqual([expect.objectContaining({ nodeName: 'c', source: 'heartbeat' })]);
  });

  it('does not fail the cluster over when most nodes fall silent at once (the heartbeat path is suspect)', async () => {
    const nodes = ['a', 'b', 'c', 'd', 'e'];
    for (let i = 0; i < 3; i++) {
      nodes.forEach(beat);
      await jest.advanceTimersByTimeAsync(2000);
    }
    await jest.advanceTimersByTimeAsync(30_000);
    expect(calls().filter((c) => c.kind === 'node-down')).toHaveLength(0);
  });
});
