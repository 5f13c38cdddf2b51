import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

const SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'cluster:read'];

/**
 * Inference endpoints end to end at simulation speed 1 (cold starts are real seconds):
 * replicas placed by the scheduling cycle as allocations, the activator, scale to zero.
 */
describe('inference endpoints (real Postgres and Redis, simulated cluster at speed 1)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let other: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '1' });
    t = await makeTenant(sys.db, 'ep-int', { scopes: SCOPES, quota: { guaranteed: 4, limit: 4 } });
    other = await makeTenant(sys.db, 'ep-other', { scopes: SCOPES });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 60_000);
  afterAll(async () => sys?.close());

  const http = () => sys.http();
  const as = (auth: string) => ({
    get: (path: string) => http().get(path).set('Authorization', auth),
    post: (path: string, body: object = {}) => http().post(path).set('Authorization', auth).send(body),
    patch: (path: string, body: object) => http().patch(path).set('Authorization', auth).send(body),
    del: (path: string) => http().delete(path).set('Authorization', auth),
  });
  const create = (body: object) =>
    as(t.auth).post('/v1/endpoints', { teamId: t.team.id, model: 'llama-3-8b', resources: { gpus: 1, gpuModel: 'H100-80GB' }, ...body });

  it('an invoke at zero holds the request, places a replica as an allocation and records a cold start under 5 s', async () => {
    const ep = (await create({ name: 'cold', minReplicas: 0, maxReplicas: 2, scaleToZeroAfterSeconds: 600 })).body;
    expect(ep.state).toBe('scaled-to-zero');
    const t0 = Date.now();
    const res = await as(t.auth).post(`/v1/endpoints/${ep.id}/invoke`, { input: 'hello' });
    const took = Date.now() - t0;
    expect(res.status).toBe(200);
    expect(res.body.coldStart).toBe(true);
    expect(took).toBeLessThan(5000);
    expect(took).toBeGreaterThanOrEqual(3000); // the simulated model load is 3 s
    const allocs = await sys.db.allocation.findMany({ where: { endpointId: ep.id, endedAt: null } });
    expect(allocs).toHaveLength(1);
    expect(allocs[0]!.jobId).toBeNull();
    expect(Number(allocs[0]!.gpuUnits)).toBe(1);
    const detail = (await as(t.auth).get(`/v1/endpoints/${ep.id}`)).body;
    expect(detail.coldStarts.count).toBe(1);
    expect(detail.coldStarts.p50Ms).toBeLessThan(5000);
    expect(detail.coldStarts.p95Ms).toBeLessThan(5000);
    expect(detail.replicas.ready).toBe(1);
    expect(detail.replicaList[0].gpus).toHaveLength(1);
    // warm path: no wait, no new cold start
    const warm = await as(t.auth).post(`/v1/endpoints/${ep.id}/invoke`, { input: 'again' });
    expect(warm.body.coldStart).toBe(false);
    expect((await as(t.auth).get(`/v1/endpoints/${ep.id}`)).body.coldStarts.count).toBe(1);
    expect(
      Number(/^gantry_cold_starts_total (\d+)/m.exec((await sys.http().get('/metrics').set('Authorization', `Bearer ${BOOTSTRAP_ADMIN_KEY}`)).text)?.[1] ?? 0),
    ).toBeGreaterThanOrEqual(1);
    await as(t.auth).del(`/v1/endpoints/${ep.id}`);
    await eventually(async () => (await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })) === 0, 15_000);
  }, 30_000);

  it('with a warm pool, a request at zero is answered by a pre-staged replica without a model load', async () => {
    const ep = (await create({ name: 'warm', minReplicas: 0, maxReplicas: 1, warmPool: 1, scaleToZeroAfterSeconds: 600 })).body;
    await eventually(async () => {
      const d = (await as(t.auth).get(`/v1/endpoints/${ep.id}`)).body;
      return d.replicaList.some((r: { serving: boolean; state: string }) => !r.serving && r.state === 'ready');
    }, 15_000);
    const t0 = Date.now();
    const res = await as(t.auth).post(`/v1/endpoints/${ep.id}/invoke`, { input: 'fast' });
    expect(res.body.coldStart).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1000);
    const cold = await sys.db.coldStart.findMany({ where: { endpointId: ep.id } });
    expect(cold).toHaveLength(1);
    expect(cold[0]!.warm).toBe(true);
    // the pool is refilled in the background: one serving + one warm replica, two allocations
    await eventually(async () => (await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })) === 2, 15_000);
    await as(t.auth).del(`/v1/endpoints/${ep.id}`);
    await eventually(async () => (await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })) === 0, 15_000);
  }, 40_000);

  it('replicas count against the team quota like jobs: a job that would pass the limit waits with a quota reason', async () => {
    const ep = (await create({ name: 'quota', minReplicas: 0, maxReplicas: 4, scaleToZeroAfterSeconds: 600 })).body;
    expect((await as(t.auth).post(`/v1/endpoints/${ep.id}/scale`, { replicas: 2 })).status).toBe(200);
    await eventually(async () => (await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })) === 2, 15_000);
    const job = (await as(t.auth).post('/v1/jobs', { teamId: t.team.id, name: 'over-quota', kind: 'training', resources: { gpus: 3, gpuModel: 'H100-80GB' } }))
      .body;
    const waiting = await eventually(async () => {
      const j = (await as(t.auth).get(`/v1/jobs/${job.id}`)).body;
      return j.reasons.some((r: { message: string }) => /quota/i.test(r.message)) ? j : undefined;
    }, 15_000);
    expect(waiting.state).toBe('pending');
    await as(t.auth).post(`/v1/jobs/${job.id}/cancel`);
    await as(t.auth).del(`/v1/endpoints/${ep.id}`);
    await eventually(async () => (await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })) === 0, 15_000);
  }, 40_000);

  it('a MIG replica holds one slice: the allocation carries the profile and counts compute slices / 7 of a GPU', async () => {
    // An idle, healthy H100 of a ready node (other spec files share this database and may leave nodes cordoned).
    const gpu = await sys.db.gpu.findFirstOrThrow({
      where: { model: 'H100-80GB', mode: 'whole', health: 'healthy', schedulable: true, node: { state: 'ready' }, allocations: { none: { endedAt: null } } },
      orderBy: { id: 'desc' },
    });
    const mig = await http()
      .put(`/v1/gpus/${gpu.id}/mig`)
      .set('Authorization', `Bearer ${BOOTSTRAP_ADMIN_KEY}`)
      .send({ layout: [0, 2, 4, 6].map((start) => ({ profile: '1g.20gb', start })) });
    expect(mig.status).toBe(202);
    await eventually(async () => (await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).mode === 'mig', 20_000, 250);
    const ep = (await create({ name: 'mig', resources: { migProfile: '1g.20gb', gpuModel: 'H100-80GB' }, maxReplicas: 1, scaleToZeroAfterSeconds: 600 })).body;
    try {
      const res = await as(t.auth).post(`/v1/endpoints/${ep.id}/invoke`, { input: 'slice' });
      expect(res.status).toBe(200);
      const [alloc] = await sys.db.allocation.findMany({ where: { endpointId: ep.id, endedAt: null } });
      expect(alloc!.migProfile).toBe('1g.20gb');
      expect(alloc!.gpuId).toBe(gpu.id);
      expect(Number(alloc!.gpuUnits)).toBeCloseTo(1 / 7, 3);
    } finally {
      await as(t.auth).del(`/v1/endpoints/${ep.id}`);
    }
    await eventually(async () => (await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })) === 0, 15_000);
  }, 90_000);

  it('scales to zero after the idle time and releases the GPUs', async () => {
    const ep = (await create({ name: 'idle', minReplicas: 0, maxReplicas: 2, scaleToZeroAfterSeconds: 3 })).body;
    const scaled = await as(t.auth).post(`/v1/endpoints/${ep.id}/scale`, { replicas: 1 });
    expect(scaled.status).toBe(200);
    await eventually(async () => (await as(t.auth).get(`/v1/endpoints/${ep.id}`)).body.replicas.ready === 1, 15_000);
    // The manual scale holds for one stable window; end it now to watch the idle rule alone.
    await sys.db.endpoint.update({ where: { id: ep.id }, data: { manualUntil: new Date(), lastRequestAt: new Date() } });
    const zero = await eventually(
      async () => {
        const d = (await as(t.auth).get(`/v1/endpoints/${ep.id}`)).body;
        return d.state === 'scaled-to-zero' && d.replicas.ready === 0 ? d : undefined;
      },
      20_000,
      250,
    );
    expect(zero.desiredReplicas).toBe(0);
    expect(await sys.db.allocation.count({ where: { endpointId: ep.id, endedAt: null } })).toBe(0);
    await as(t.auth).del(`/v1/endpoints/${ep.id}`);
  }, 40_000);

  it.each([['minReplicas > maxReplicas on create', () => create({ name: 'bad', minReplicas: 3, maxReplicas: 2 }), 400, 'validation_failed']])(
    '%s is refused',
    async (_n, call, wantStatus, wantCode) => {
      const res = await call();
      expect(res.status).toBe(wantStatus);
      expect(res.body.error.code).toBe(wantCode);
    },
  );

  it('refuses bad scaling with 409 naming the reason, and min > max on PATCH with 400', async () => {
    const ep = (await create({ name: 'bounds', minReplicas: 0, maxReplicas: 8 })).body;
    const beyondMax = await as(t.auth).post(`/v1/endpoints/${ep.id}/scale`, { replicas: 9 });
    expect(beyondMax.status).toBe(409);
    expect(beyondMax.body.error.message).toContain('maxReplicas is 8');
    const beyondQuota = await as(t.auth).post(`/v1/endpoints/${ep.id}/scale`, { replicas: 5 });
    expect(beyondQuota.status).toBe(409);
    expect(beyondQuota.body.error.code).toBe('quota_exceeded');
    expect(beyondQuota.body.error.message).toContain('limit');
    const patch = await as(t.auth).patch(`/v1/endpoints/${ep.id}`, { minReplicas: 9 });
    expect(patch.status).toBe(400);
    expect(patch.body.error.message).toContain('maxReplicas');
    await as(t.auth).del(`/v1/endpoints/${ep.id}`);
  });

  it('another tenant gets 404 on every endpoint route', async () => {
    const ep = (await create({ name: 'private' })).body;
    const o = as(other.auth);
    const calls = [
      o.get(`/v1/endpoints/${ep.id}`),
      o.patch(`/v1/endpoints/${ep.id}`, { maxReplicas: 3 }),
      o.post(`/v1/endpoints/${ep.id}/scale`, { replicas: 1 }),
      o.post(`/v1/endpoints/${ep.id}/invoke`, { input: 'x' }),
      o.post('/v1/sim/traffic', { endpointId: ep.id, rps: 10, durationSeconds: 5 }),
      o.del(`/v1/endpoints/${ep.id}`),
    ];
    for (const c of calls) expect((await c).status).toBe(404);
    const list = (await o.get('/v1/endpoints')).body;
    expect(list.items.map((e: { id: string }) => e.id)).not.toContain(ep.id);
    expect((await as(t.auth).get(`/v1/endpoints/${ep.id}`)).status).toBe(200);
    await as(t.auth).del(`/v1/endpoints/${ep.id}`);
  });
});
