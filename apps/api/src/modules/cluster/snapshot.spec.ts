import type { NodeRow } from './cluster.repository';
import { buildSnapshot } from './snapshot';

const allocation = (jobId: string) => ({ jobId, tenantId: 't', migStart: null, milli: 1000, gpuUnits: 1, cpuMilli: 1000, memoryMiB: 1024 });
const row = (id: string, o: { jobs?: string[]; refusedUntil?: Date } = {}) =>
  ({
    id,
    name: id,
    state: 'ready',
    powerState: 'on',
    bareMetalLeaseId: null,
    persona: 'container',
    cpuMilli: 128_000,
    memoryMiB: 1_000_000,
    leaf: { name: 'l0', spine: { name: 's0' } },
    gpus: [0, 1].map((index) => ({
      id: `${id}-g${index}`,
      index,
      model: 'H100-80GB',
      nvlinkDomain: 0,
      health: 'healthy',
      schedulable: true,
      startRefusedUntil: index === 1 ? (o.refusedUntil ?? null) : null,
      mode: 'whole',
      instances: [],
      allocations: index === 0 ? (o.jobs ?? []).map(allocation) : [],
    })),
  }) as unknown as NodeRow;

describe('buildSnapshot', () => {
  it('derives a node once per row: the same state for the same row, a new one for a row read again', () => {
    const a = row('a');
    const b = row('b', { jobs: ['j1'] });
    const first = buildSnapshot([a, b], undefined, 1000);
    const second = buildSnapshot([a, b], undefined, 2000);
    expect(second.nodes[0]).toBe(first.nodes[0]);
    expect(second.nodes[1]).toBe(first.nodes[1]);
    const bAgain = row('b');
    const third = buildSnapshot([a, bAgain], undefined, 3000);
    expect(third.nodes[0]).toBe(first.nodes[0]);
    expect(third.nodes[1]).not.toBe(first.nodes[1]);
    expect(third.nodes[1]!.gpus[0]!.allocated).toBe(false);
    expect(third.nodes[1]!.cpuMilliFree).toBe(128_000);
  });

  it('derives a node again once a start refusal on it has ended (the GPU is schedulable again)', () => {
    const a = row('a', { refusedUntil: new Date(5000) });
    expect(buildSnapshot([a], undefined, 1000).nodes[0]!.gpus[1]!.schedulable).toBe(false);
    expect(buildSnapshot([a], undefined, 4999).nodes[0]!.gpus[1]!.schedulable).toBe(false);
    expect(buildSnapshot([a], undefined, 5000).nodes[0]!.gpus[1]!.schedulable).toBe(true);
    // an earlier time than the state was derived at is not answered from it
    expect(buildSnapshot([a], undefined, 1000).nodes[0]!.gpus[1]!.schedulable).toBe(false);
  });

  it('answers an earlier time from a state derived later when no start refusal ended in between (a caller whose clock was read first)', () => {
    const a = row('a', { refusedUntil: new Date(5000) });
    const late = buildSnapshot([a], undefined, 7000).nodes[0]!;
    expect(buildSnapshot([a], undefined, 6000).nodes[0]).toBe(late);
    expect(buildSnapshot([a], undefined, 5000).nodes[0]).toBe(late);
    // before the refusal ended: derived again, the GPU still refused
    expect(buildSnapshot([a], undefined, 4000).nodes[0]!.gpus[1]!.schedulable).toBe(false);
    const plain = row('b');
    const later = buildSnapshot([plain], undefined, 9000).nodes[0]!;
    expect(buildSnapshot([plain], undefined, 1000).nodes[0]).toBe(later);
  });

  it('leaves out the `without` jobs only on the nodes that hold them, and keeps the shared states as they were', () => {
    const a = row('a', { jobs: ['j1'] });
    const b = row('b', { jobs: ['j2'] });
    const kept = buildSnapshot([a, b], undefined, 1000);
    const whatIf = buildSnapshot([a, b], new Set(['j1']), 1000);
    expect(whatIf.nodes[0]!.gpus[0]!.allocated).toBe(false);
    expect(whatIf.nodes[0]).not.toBe(kept.nodes[0]);
    expect(whatIf.nodes[1]).toBe(kept.nodes[1]);
    expect(buildSnapshot([a, b], undefined, 1000).nodes[0]!.gpus[0]!.allocated).toBe(true);
  });
});
