import type { ClusterSnapshot, NodeState, PendingJob } from '@gantry/scheduler';
import type { Hold } from '../reservations/reservation-holds';
import { placeAroundHolds, type HoldJobInfo } from './hold-placement';

const nodeOf = (name: string): NodeState => ({
  id: name,
  name,
  leaf: 'leaf-0',
  spine: 'spine-0',
  schedulable: true,
  persona: 'container',
  cpuMilli: 128_000,
  memoryMiB: 1_024_000,
  cpuMilliFree: 128_000,
  memoryMiBFree: 1_024_000,
  gpus: Array.from({ length: 4 }, (_, i) => ({
    id: `${name}/${i}`,
    index: i,
    model: 'A100',
    nvlinkDomain: 0,
    healthy: true,
    schedulable: true,
    mode: 'whole' as const,
    allocated: false,
    sharedMilliUsed: 0,
    mig: [],
  })),
});
const snapshot = (): ClusterSnapshot => ({ nodes: [nodeOf('n0'), nodeOf('n1')] });
const job = (id: string, teamId: string, gpus = 4): PendingJob => ({
  id,
  teamId,
  priority: 0,
  createdAtMs: 0,
  replicas: 1,
  request: { gpus, gpuModels: ['A100'], cpuMilli: 1000, memoryMiB: 1024 },
  topology: { level: 'node', required: true },
});
const hold = (over: Partial<Hold>): Hold => ({
  reservationId: 'r1',
  name: 'night run',
  teamId: 'holder',
  gpuModel: 'A100',
  heldGpus: 4,
  wholeNodes: false,
  start: 1_000,
  end: 2_000,
  active: true,
  gpuIds: new Set(['n1/0', 'n1/1', 'n1/2', 'n1/3']),
  othersPreemptible: [],
  othersFixed: [],
  victims: [],
  ...over,
});
const placedOn = (d: ReturnType<typeof placeAroundHolds>, id: string) => d.placed.find((p) => p.jobId === id)?.replicas[0]?.nodeId;

describe('placeAroundHolds', () => {
  it('an open window keeps its GPUs for the holder: another team waits, naming the reservation', () => {
    const info = new Map<string, HoldJobInfo>([['o1', { preemptible: true, endsByMs: null }]]);
    const d = placeAroundHolds(snapshot(), [job('o1', 'other'), job('o2', 'other'), job('h1', 'holder')], [hold({})], info);
    expect(placedOn(d, 'h1')).toBe('n1');
    expect(placedOn(d, 'o1') ?? placedOn(d, 'o2')).toBe('n0');
    const waiting = d.pending[0]!;
    expect(waiting.reasons.map((r) => r.code)).toContain('reserved_capacity');
    expect(waiting.reasons.at(-1)!.message).toContain('"night run"');
  });

  it('before the window: preemptible work and work that ends by the start may use the GPUs; other work may not', () => {
    const soon = hold({ active: false, start: 10_000 });
    const full = { nodes: [snapshot().nodes[1]!] };
    const info = new Map<string, HoldJobInfo>([
      ['pre', { preemptible: true, endsByMs: null }],
      ['short', { preemptible: false, endsByMs: 9_000 }],
      ['long', { preemptible: false, endsByMs: 11_000 }],
      ['forever', { preemptible: false, endsByMs: null }],
    ]);
    for (const [id, placed] of [
      ['pre', true],
      ['short', true],
      ['long', false],
      ['forever', false],
    ] as const) {
      const d = placeAroundHolds(full, [job(id, 'other')], [soon], info);
      expect([id, d.placed.length === 1]).toEqual([id, placed]);
    }
  });

  it('the cycle bound on placements holds across the passes: the holder places first, the rest is deferred', () => {
    const one = (id: string, teamId: string) => ({ ...job(id, teamId, 1), topology: { level: 'any' as const, required: false } });
    const d = placeAroundHolds(snapshot(), [one('o1', 'other'), one('o2', 'other'), one('h1', 'holder')], [hold({})], new Map(), { maxPlacements: 2 });
    expect(placedOn(d, 'h1')).toBe('n1');
    expect(d.placed).toHaveLength(2);
    expect(d.deferred).toHaveLength(1);
    expect(d.pending).toEqual([]);
  });

  it('without holds it is the plain engine cycle', () => {
    const d = placeAroundHolds(snapshot(), [job('a', 't'), job('b', 't')], [], new Map());
    expect(d.placed).toHaveLength(2);
  });
});
