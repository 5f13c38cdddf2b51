import { Redis } from 'ioredis';
import { eventually, startSystem, type TestSystem } from './test-support/system';
import { CLUSTER_DRIVER, type ClusterDriver } from './driver/driver.provider';
import { MigChangesRepository } from './modules/node-manager/mig-changes.repository';
import { withLease } from './modules/node-manager/gpu-lease';
import { APP_CONFIG, type AppConfig } from './config/config';
import { checkInvariants } from './invariants';

/** MIG changes of one GPU that follow each other: one applied at a time, the newest one wins on the cluster and in the database. */
describe('MIG changes of one GPU in a row (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let redis: Redis;
  const key = () => `${sys.worker.get<AppConfig>(APP_CONFIG).queuePrefix}:test-lease:${Date.now()}:${Math.random()}`;
  const idleH100 = (skip = 0) =>
    sys.db.gpu.findFirstOrThrow({
      where: { model: 'H100-80GB', mode: 'whole', schedulable: true, allocations: { none: { endedAt: null } } },
      include: { node: true },
      orderBy: { id: 'asc' },
      skip,
    });
  const layoutOf = (xs: { profile: string; start: number }[]) => xs.map((s) => `${s.profile}@${s.start}`).sort();

  beforeAll(async () => {
    sys = await startSystem();
    const c = sys.worker.get<AppConfig>(APP_CONFIG).redis;
    redis = new Redis({ host: c.host, port: c.port, password: c.password, db: c.db, maxRetriesPerRequest: 2 });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await sys?.close();
  });

  it('a GPU lease has one holder across processes, outlives its time while renewed, and is free again once released', async () => {
    const k = key();
    let second: Awaited<ReturnType<typeof withLease>> | undefined;
    const first = await withLease(
      redis,
      k,
      async () => {
        await new Promise((r) => setTimeout(r, 2_500)); // more than twice the lease's time: renewed meanwhile
        second = await withLease(redis, k, async () => 'ran', 1_000);
        return 'first';
      },
      // long enough that a busy machine's event loop still renews it in time (300 ms lapsed under CI load)
      1_000,
    );
    expect(first).toEqual({ held: true, value: 'first' });
    expect(second).toEqual({ held: false });
    expect(await withLease(redis, k, async () => 'again', 1_000)).toEqual({ held: true, value: 'again' });
    // a holder that died (no renewal, no release) frees it when its time is up
    await redis.set(k, 'dead-holder', 'PX', 200);
    expect((await withLease(redis, k, async () => 1)).held).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect((await withLease(redis, k, async () => 1)).held).toBe(true);
  });

  it('stores an applied layout only while it is still the target: a change replaced meanwhile is not written over the newer one', async () => {
    const repo = sys.worker.get(MigChangesRepository);
    const gpu = await idleH100(5);
    const older = [{ profile: '7g.80gb', start: 0, size: 8 }];
    const newer = [
      { profile: '3g.40gb', start: 0 },
      { profile: '3g.40gb', start: 4 },
    ];
    await repo.beginMigChange(gpu.id, newer, 'test: the newer request', new Date());
    expect(await repo.commitMigLayout(gpu.id, older, new Date(), { whileTarget: older })).toBe('replaced');
    const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id }, include: { instances: true } });
    expect(g.instances).toEqual([]);
    expect(layoutOf(g.migTarget as { profile: string; start: number }[])).toEqual(layoutOf(newer));
    expect(g.schedulable).toBe(false);
    // the newer one is applied and stored the usual way (its change, found without a queue job, is enqueued again)
    await eventually(async () => {
      const x = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id }, include: { instances: true } });
      return x.schedulable && x.migTarget === null && layoutOf(x.instances).join() === layoutOf(newer).join();
    }, 45_000);
    const driver = sys.worker.get<ClusterDriver>(CLUSTER_DRIVER);
    expect(layoutOf((await driver.discoverNode(gpu.node.name))!.gpus[gpu.index]!.migLayout)).toEqual(layoutOf(newer));
    const { violations } = await checkInvariants(sys.db, { settled: true, graceSeconds: 1 });
    expect(violations.filter((v) => v.subject.includes(gpu.id))).toEqual([]);
  });
});
