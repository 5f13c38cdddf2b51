import { Redis } from 'ioredis';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { CLUSTER_DRIVER, type ClusterDriver } from './driver/driver.provider';
import { eventsChannel } from './modules/events/events.publisher';
import { decodeFeedMessage } from './modules/events/feed-message';
import { checkInvariants } from './invariants';

const SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'cluster:read'];
const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

/**
 * MIG layouts across a restart of the whole system (API and worker stopped and started again on
 * the same database and Redis, as `npm run dev` is): the fresh simulated cluster has none of the
 * layouts the database holds. The worker reconciles at boot, a refused start never loops onto the
 * same slice, and the live event feed keeps up with a burst of events.
 */
describe('MIG layouts and refused starts across a restart (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem();
    t = await makeTenant(sys.db, 'mig-restart', { scopes: SCOPES, quota: { guaranteed: 64, limit: 128 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 60_000);
  afterAll(async () => sys?.close());

  const as = (auth: string) => ({
    get: (path: string) => sys.http().get(path).set('Authorization', auth),
    post: (path: string, body: object = {}) => sys.http().post(path).set('Authorization', auth).send(body),
    put: (path: string, body: object) => sys.http().put(path).set('Authorization', auth).send(body),
    del: (path: string) => sys.http().delete(path).set('Authorization', auth),
  });
  const driver = () => sys.worker.get<ClusterDriver>(CLUSTER_DRIVER);
  const clusterLayout = async (nodeName: string, index: number) =>
    (await driver().discover()).nodes
      .find((n) => n.name === nodeName)!
      .gpus.find((g) => g.index === index)!
      .migLayout.map((s) => `${s.profile}@${s.start}`)
      .sort();
  const state = (id: string, want: string, ms = 20_000) =>
    eventually(async () => {
      const j = (await as(t.auth).get(`/v1/jobs/${id}`)).body;
      return j.state === want ? j : undefined;
    }, ms);
  const submit = async (resources: object, name: string) => {
    const r = await as(t.auth).post('/v1/jobs', { teamId: t.team.id, name, kind: 'notebook', resources, simulation: { durationSeconds: 5000 } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };
  const requeues = async (jobId: string) => sys.db.event.count({ where: { jobId, type: 'job.requeued' } });

  it('after a restart, the wanted layout is applied again; a 1g job runs on a slice the cluster has, suspend/resume and an endpoint too', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'H100-80GB', node: { name: 'h100-s0-l0-n0' }, index: 4 }, include: { node: true } });
    const layout = [
      { profile: '3g.40gb', start: 0 },
      { profile: '1g.10gb', start: 4 },
      { profile: '1g.10gb', start: 5 },
      { profile: '1g.10gb', start: 6 },
    ];
    const wantLayout = layout.map((s) => `${s.profile}@${s.start}`).sort();
    expect((await as(admin).put(`/v1/gpus/${gpu.id}/mig`, { layout })).status).toBe(202);
    await eventually(async () => {
      const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } });
      return g.mode === 'mig' && g.schedulable;
    });
    expect(await clusterLayout(gpu.node.name, 4)).toEqual(wantLayout);

    await sys.restart();
    // The database's layout is what was wanted: applied again on the fresh cluster, the GPU out of placement meanwhile.
    const drift = await eventually(() => sys.db.event.findFirst({ where: { type: 'gpu.mig.drift', data: { path: ['gpuId'], equals: gpu.id } } }));
    expect(drift.message).toMatch(/the cluster has MIG off, the database wanted .*re-applying/);
    await eventually(async () => {
      const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } });
      return g.schedulable && g.migTarget === null && (await clusterLayout(gpu.node.name, 4)).join() === wantLayout.join();
    });

    const job = await submit({ migProfile: '1g.10gb', gpuModel: 'H100-80GB' }, 'after-restart');
    const run = await state(job, 'running');
    const slot = run.placement[0].gpus[0];
    expect(await clusterLayout(gpu.node.name, 4)).toContain(`${slot.migProfile}@${slot.migStart}`);
    expect(await requeues(job)).toBe(0);

    expect((await as(t.auth).post(`/v1/jobs/${job}/suspend`)).status).toBe(200);
    await state(job, 'suspended');
    expect((await as(t.auth).post(`/v1/jobs/${job}/resume`)).status).toBe(200);
    await state(job, 'running');
    expect(await requeues(job)).toBe(0);

    const ep = (
      await as(t.auth).post('/v1/endpoints', {
        teamId: t.team.id,
        name: 'after-restart',
        model: 'llama-3-8b',
        resources: { migProfile: '1g.10gb', gpuModel: 'H100-80GB' },
        minReplicas: 0,
        maxReplicas: 1,
        scaleToZeroAfterSeconds: 600,
      })
    ).body;
    try {
      const res = await as(t.auth).post(`/v1/endpoints/${ep.id}/invoke`, { input: 'hello' });
      expect(res.status).toBe(200);
    } finally {
      await as(t.auth).del(`/v1/endpoints/${ep.id}`);
      await as(t.auth).post(`/v1/jobs/${job}/cancel`);
    }
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  }, 120_000);

  it('a start refused for a slice the cluster lacks re-inventories the GPU and runs the job there once the layout is applied, without a loop', async () => {
    // The database says an A100 has a 1g.10gb slice the cluster does not have (a layout lost behind Gantry's back).
    const gpu = await sys.db.gpu.findFirstOrThrow({
      where: { model: 'A100-80GB', mode: 'whole', schedulable: true, allocations: { none: { endedAt: null } } },
      include: { node: true },
      orderBy: { id: 'asc' },
    });
    await sys.db.gpu.update({ where: { id: gpu.id }, data: { mode: 'mig', instances: { create: [{ profile: '1g.10gb', start: 0, size: 1 }] } } });
    const job = await submit({ migProfile: '1g.10gb', gpuModel: 'A100-80GB' }, 'refused-once');
    const run = await state(job, 'running');
    expect(run.placement[0].gpus[0]).toMatchObject({ gpuId: gpu.id, migProfile: '1g.10gb', migStart: 0 });
    expect(await clusterLayout(gpu.node.name, gpu.index)).toEqual(['1g.10gb@0']);
    expect(await requeues(job)).toBeLessThanOrEqual(1);
    expect(await sys.db.event.count({ where: { jobId: job, type: 'job.placed' } })).toBeLessThanOrEqual(2);
    await as(t.auth).post(`/v1/jobs/${job}/cancel`);
  }, 60_000);

  it('the live feed publishes new events after a burst far larger than one page', async () => {
    const sub = new Redis({ ...sys.config.redis, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await sub.connect();
      const seen: string[] = [];
      sub.on('message', (_c: string, m: string) => seen.push(...decodeFeedMessage(m).map((e) => e.type)));
      await sub.subscribe(eventsChannel(sys.config.queuePrefix));
      const at = new Date();
      await sys.db.event.createMany({
        data: Array.from({ length: 1600 }, (_, i) => ({ tenantId: null, type: 'test.burst', message: `burst ${i}`, createdAt: at })),
      });
      await sys.db.event.create({ data: { tenantId: null, type: 'test.after-burst', message: 'after the burst', createdAt: new Date(at.getTime() + 5) } });
      await eventually(async () => seen.includes('test.after-burst'), 15_000, 100);
      expect(seen.filter((x) => x === 'test.burst')).toHaveLength(1600);
    } finally {
      sub.disconnect();
    }
  }, 30_000);
});
