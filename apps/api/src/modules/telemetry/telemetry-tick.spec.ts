import { bucketOf, computeTick, withClusterRows, type TickAllocation, type TickGpu } from './telemetry-tick';

const at = new Date('2026-11-30T10:00:15.000Z');
const gpus: TickGpu[] = [
  { id: 'g0', nodeId: 'n1', nodeName: 'node-1', index: 0, model: 'H100-80GB' },
  { id: 'g1', nodeId: 'n1', nodeName: 'node-1', index: 1, model: 'H100-80GB' },
];
const alloc = (over: Partial<TickAllocation>): TickAllocation => ({
  gpuId: 'g0',
  nodeId: 'n1',
  gpuModel: 'H100-80GB',
  tenantId: 'acme',
  teamId: 'ml',
  gpuUnits: 1,
  startedAt: new Date('2026-11-30T09:00:00Z'),
  endedAt: null,
  ...over,
});
const sample = (gpuIndex: number, smPct: number, powerW = 500) => ({ nodeName: 'node-1', gpuIndex, smPct, memoryUsedMiB: 1000, powerW });
const run = (allocations: TickAllocation[], samples = [sample(0, 90), sample(1, 0, 70)], previousIdleSince = new Map<string, Date | null>()) =>
  computeTick({ at, windowSeconds: 15, gpus, samples, allocations, previousIdleSince, idleSmPct: 5 });
const row = (out: ReturnType<typeof run>, teamId: string) => out.deltas.find((d) => d.teamId === teamId);

describe('computeTick', () => {
  it.each([
    { name: 'a whole GPU held for the whole window', allocations: [alloc({})], wantAllocated: 15 },
    {
      name: 'an allocation that started mid-window counts from its start',
      allocations: [alloc({ startedAt: new Date('2026-11-30T10:00:10Z') })],
      wantAllocated: 5,
    },
    { name: 'an allocation that ended mid-window counts until its end', allocations: [alloc({ endedAt: new Date('2026-11-30T10:00:03Z') })], wantAllocated: 3 },
    { name: 'a 3g MIG slice counts 3/7 of a GPU', allocations: [alloc({ gpuUnits: 3 / 7 })], wantAllocated: (15 * 3) / 7 },
    {
      name: 'an allocation that ended before the window counts nothing',
      allocations: [alloc({ endedAt: new Date('2026-11-30T09:59:00Z') })],
      wantAllocated: 0,
    },
  ])('$name', ({ allocations, wantAllocated }) => {
    const out = run(allocations);
    expect(row(out, 'ml')?.allocatedSeconds ?? 0).toBeCloseTo(wantAllocated, 6);
    expect(row(out, '')!.capacitySeconds).toBe(30);
  });

  it('gives the measured activity of a held GPU to its holder and an idle GPU to the unallocated row', () => {
    const out = run([alloc({})]);
    expect(row(out, 'ml')).toMatchObject({ busySeconds: 13.5, energyJoules: 7500, memoryMiBSeconds: 15000 });
    expect(row(out, '')).toMatchObject({ busySeconds: 0, energyJoules: 70 * 15 });
  });

  it('splits a shared GPU between its holders by their share and leaves the rest unallocated', () => {
    const out = run([alloc({ gpuUnits: 0.25, teamId: 'a' }), alloc({ gpuUnits: 0.25, teamId: 'b' })], [sample(0, 40, 400)]);
    expect(row(out, 'a')).toMatchObject({ busySeconds: 3, energyJoules: 1500 });
    expect(row(out, 'b')).toMatchObject({ busySeconds: 3, energyJoules: 1500 });
    expect(row(out, '')!.energyJoules).toBe(3000);
  });

  it.each([
    { name: 'an allocated GPU under the threshold becomes idle now', sm: 1, held: true, prev: undefined, wantIdleSince: at },
    {
      name: 'an allocated GPU stays idle since the first idle tick',
      sm: 1,
      held: true,
      prev: new Date('2026-11-30T09:00:00Z'),
      wantIdleSince: new Date('2026-11-30T09:00:00Z'),
    },
    { name: 'a busy allocated GPU is not idle', sm: 50, held: true, prev: new Date('2026-11-30T09:00:00Z'), wantIdleSince: null },
    { name: 'a free GPU is never flagged', sm: 0, held: false, prev: undefined, wantIdleSince: null },
  ])('$name', ({ sm, held, prev, wantIdleSince }) => {
    const out = run(held ? [alloc({})] : [], [sample(0, sm)], new Map(prev ? [['g0', prev]] : []));
    expect(out.latest.find((l) => l.gpuId === 'g0')!.idleSince).toEqual(wantIdleSince);
  });

  it('counts the held GPU-seconds of an idle allocated GPU as idle for its holder, by share and held time; a busy one not', () => {
    const idle = run(
      [alloc({ gpuUnits: 3 / 7, teamId: 'a' }), alloc({ teamId: 'b', gpuUnits: 1 / 7, startedAt: new Date('2026-11-30T10:00:10Z') })],
      [sample(0, 2)],
    );
    expect(row(idle, 'a')!.idleSeconds).toBeCloseTo((15 * 3) / 7, 6);
    expect(row(idle, 'b')!.idleSeconds).toBeCloseTo(5 / 7, 6);
    expect(row(idle, '')!.idleSeconds).toBe(0);
    expect(withClusterRows(idle.deltas).find((d) => d.nodeId === '' && d.teamId === 'a')!.idleSeconds).toBeCloseTo((15 * 3) / 7, 6);
    expect(row(run([alloc({})], [sample(0, 50)]), 'ml')!.idleSeconds).toBe(0);
  });

  it('charges a holder that arrived mid-window only for the part of the window it held', () => {
    const out = run([alloc({ startedAt: new Date('2026-11-30T10:00:10Z') })], [sample(0, 90)]);
    expect(row(out, 'ml')!.busySeconds).toBeCloseTo(4.5, 6);
    expect(row(out, 'ml')!.busySeconds).toBeLessThanOrEqual(row(out, 'ml')!.allocatedSeconds);
    expect(row(out, '')!.busySeconds).toBeCloseTo(9, 6);
  });

  it('ignores samples of GPUs it does not know', () => {
    expect(run([], [{ ...sample(0, 50), nodeName: 'ghost' }]).latest).toEqual([]);
  });
});

describe('withClusterRows', () => {
  it('adds, per model and holder, the sum over every node under nodeId ""', () => {
    const gpus2: TickGpu[] = [...gpus, { id: 'g9', nodeId: 'n2', nodeName: 'node-2', index: 0, model: 'H100-80GB' }];
    const out = computeTick({
      at,
      windowSeconds: 15,
      gpus: gpus2,
      samples: [],
      allocations: [alloc({}), alloc({ gpuId: 'g9', nodeId: 'n2' })],
      previousIdleSince: new Map(),
      idleSmPct: 5,
    });
    const all = withClusterRows(out.deltas).filter((d) => d.nodeId === '');
    expect(all).toHaveLength(2);
    expect(all.find((d) => d.teamId === 'ml')).toMatchObject({ allocatedSeconds: 30, gpuModel: 'H100-80GB' });
    expect(all.find((d) => d.teamId === '')).toMatchObject({ capacitySeconds: 45 });
  });
});

describe('bucketOf', () => {
  it.each([
    { at: '2026-11-30T10:00:59.999Z', step: 60, want: '2026-11-30T10:00:00.000Z' },
    { at: '2026-11-30T10:59:59.000Z', step: 3600, want: '2026-11-30T10:00:00.000Z' },
    { at: '2026-11-30T10:00:14.000Z', step: 15, want: '2026-11-30T10:00:00.000Z' },
  ])('$at in steps of $step s starts at $want', ({ at: t, step, want }) => {
    expect(bucketOf(new Date(t), step).toISOString()).toBe(want);
  });
});
