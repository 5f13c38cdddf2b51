import type { PrismaService } from './common/prisma.service';
import { TelemetryRepository, type WrittenTick } from './modules/telemetry/telemetry.repository';
import type { LatestGpuState } from './modules/telemetry/telemetry-tick';
import { startDatabase } from './test-support/system';

/**
 * A tick's latest GPU states against real Postgres: a process that wrote a tick before sends only
 * the states that changed since, counting what ticks of other writers changed in between; a late
 * tick never writes over a later one's states.
 */
describe('telemetry ticks (real Postgres)', () => {
  let database: Awaited<ReturnType<typeof startDatabase>>;
  let repo: TelemetryRepository;
  let gpuIds: string[];
  let nodeId: string;

  beforeAll(async () => {
    database = await startDatabase();
    const db = database.db;
    const spine = await db.spine.create({ data: { name: 'spine-t' } });
    const leaf = await db.leaf.create({ data: { name: 'leaf-t', spineId: spine.id } });
    const node = await db.node.create({ data: { name: 'node-t', leafId: leaf.id, cpuMilli: 64_000, memoryMiB: 512_000 } });
    nodeId = node.id;
    gpuIds = [];
    for (const index of [0, 1]) gpuIds.push((await db.gpu.create({ data: { nodeId, index, model: 'H100-80GB', memoryMiB: 81_920 } })).id);
    repo = new TelemetryRepository({ client: db, sql: database.sql } as unknown as PrismaService);
  }, 60_000);
  afterAll(async () => database?.close());

  const state = (gpuId: string, smPct: number): LatestGpuState => ({ gpuId, nodeId, smPct, memoryUsedMiB: smPct * 100, powerW: 70 + smPct, idleSince: null });
  const tick = async (atMs: number, sm: [number, number], since?: WrittenTick): Promise<WrittenTick> => {
    const latest = [state(gpuIds[0]!, sm[0]), state(gpuIds[1]!, sm[1])];
    const at = new Date(atMs);
    expect(await repo.writeTick({ at, latest, deltas: [], buckets: [], since })).toBe(true);
    return { at, latest: new Map(latest.map((l) => [l.gpuId, l])) };
  };
  const smInDb = async () => {
    const rows = await database.db.gpuTelemetry.findMany({ where: { gpuId: { in: gpuIds } } });
    return gpuIds.map((id) => rows.find((r) => r.gpuId === id)?.smPct);
  };

  it('corrects a state another writer changed between two ticks of this process, and sends only changes after its own tick', async () => {
    const t0 = Date.parse('2026-12-06T00:00:00Z');
    const mine = await tick(t0, [0, 0]);
    expect(await smInDb()).toEqual([0, 0]);
    // another worker's tick between: GPU 0 at 50 %
    await tick(t0 + 15_000, [50, 0]);
    // this process's next tick, with GPU 0 back at its own last value: written although unchanged since its tick
    const next = await tick(t0 + 30_000, [0, 20], mine);
    expect(await smInDb()).toEqual([0, 20]);
    // no other tick between now: a state changed outside any tick stays as it is (only changes are sent) ...
    await database.db.gpuTelemetry.update({ where: { gpuId: gpuIds[0]! }, data: { smPct: 99 } });
    await tick(t0 + 45_000, [0, 30], next);
    expect(await smInDb()).toEqual([99, 30]);
    // ... and is corrected by the next full write (a process without a tick of its own yet)
    await tick(t0 + 60_000, [0, 30]);
    expect(await smInDb()).toEqual([0, 30]);
    // the raw samples follow the changes: GPU 1 sampled at each of its three changes
    expect(await database.db.gpuSample.count({ where: { gpuId: gpuIds[1]! } })).toBe(3);
  });

  it('sends only what changed against the states another writer’s ticks left, and never writes a late tick over a later one', async () => {
    const t0 = Date.parse('2026-12-06T02:00:00Z');
    const mine = await tick(t0, [10, 10]);
    await tick(t0 + 15_000, [50, 10]); // another worker's tick: GPU 0 changed, GPU 1 did not
    // a change outside any tick shows which states the next tick sends: GPU 1's is not sent (unchanged against
    // both ticks), GPU 0's is (changed against the other writer's state, though equal to this process's own)
    await database.db.gpuTelemetry.update({ where: { gpuId: gpuIds[1]! }, data: { smPct: 99 } });
    const next = await tick(t0 + 30_000, [10, 10], mine);
    expect(await smInDb()).toEqual([10, 99]);
    // a late tick (taken after a later one was written) leaves the later states as they are
    await tick(t0 + 45_000, [20, 20], next);
    await tick(t0 + 40_000, [70, 70]);
    expect(await smInDb()).toEqual([20, 20]);
  });

  it('sums each tick’s deltas into its minute, hour and day buckets', async () => {
    const at = Date.parse('2026-12-06T01:00:30Z');
    const buckets = (ms: number) => [
      { stepSeconds: 60, bucket: new Date(Math.floor(ms / 60_000) * 60_000) },
      { stepSeconds: 3600, bucket: new Date(Math.floor(ms / 3_600_000) * 3_600_000) },
      { stepSeconds: 86400, bucket: new Date(Math.floor(ms / 86_400_000) * 86_400_000) },
    ];
    const delta = (tenantId: string, capacitySeconds: number, busySeconds: number) => ({
      nodeId,
      gpuModel: 'H100-80GB',
      tenantId,
      teamId: tenantId,
      capacitySeconds,
      allocatedSeconds: 0,
      busySeconds,
      memoryMiBSeconds: 0,
      energyJoules: 0,
      idleSeconds: 0,
    });
    for (const [ms, busy] of [
      [at, 3],
      [at + 15_000, 4],
      [at + 45_000, 5],
    ] as const) {
      expect(await repo.writeTick({ at: new Date(ms), latest: [], deltas: [delta('', 30, busy), delta('t1', 0, 1)], buckets: buckets(ms - 1) })).toBe(true);
    }
    const rows = await database.db.usageRollup.findMany({ where: { nodeId, tenantId: '' }, orderBy: [{ stepSeconds: 'asc' }, { bucket: 'asc' }] });
    expect(rows.map((r) => [r.stepSeconds, r.bucket.toISOString(), r.capacitySeconds, r.busySeconds])).toEqual([
      [60, '2026-12-06T01:00:00.000Z', 60, 7],
      [60, '2026-12-06T01:01:00.000Z', 30, 5],
      [3600, '2026-12-06T01:00:00.000Z', 90, 12],
      [86400, '2026-12-06T00:00:00.000Z', 90, 12],
    ]);
    expect(await database.db.usageRollup.count({ where: { nodeId, tenantId: 't1' } })).toBe(4);
  });
});
