import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

const SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'cluster:read'];

/**
 * Demand-driven MIG on an idle cluster: work that needs a slice no GPU has free gets a free GPU
 * re-partitioned at once (the node manager's periodic tick is set to ten minutes here, so only the
 * cycle's own request can do it in time), endpoint replicas included.
 */
describe('demand-driven MIG when it matters (real Postgres and Redis, simulated cluster at speed 50)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_RECONCILE_SECONDS: '600' });
    t = await makeTenant(sys.db, 'mig-demand', { scopes: SCOPES, quota: { guaranteed: 64, limit: 128 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 60_000);
  afterAll(async () => sys?.close());

  const as = (auth: string) => ({
    get: (path: string) => sys.http().get(path).set('Authorization', auth),
    post: (path: string, body: object = {}) => sys.http().post(path).set('Authorization', auth).send(body),
    del: (path: string) => sys.http().delete(path).set('Authorization', auth),
  });

  it('a 1g job on an idle cluster gets a GPU re-partitioned without waiting for the planner’s tick', async () => {
    const res = await as(t.auth).post('/v1/jobs', {
      teamId: t.team.id,
      name: 'notebook',
      kind: 'notebook',
      resources: { migProfile: '1g.10gb', gpuModel: 'H100-80GB' },
      simulation: { durationSeconds: 5000 },
    });
    expect(res.status).toBe(201);
    const run = await eventually(async () => {
      const j = (await as(t.auth).get(`/v1/jobs/${res.body.id}`)).body;
      return j.state === 'running' ? j : undefined;
    }, 45_000);
    expect(run.placement[0].gpus[0].migProfile).toBe('1g.10gb');
    expect(await sys.db.event.count({ where: { type: 'gpu.mig.requested' } })).toBe(1);
  }, 90_000);

  it('an endpoint at zero whose 3g slice no GPU has free gets a free GPU re-partitioned and answers', async () => {
    const ep = (
      await as(t.auth).post('/v1/endpoints', {
        teamId: t.team.id,
        name: 'three-g',
        model: 'llama-3-8b',
        resources: { migProfile: '3g.40gb', gpuModel: 'H100-80GB' },
        minReplicas: 0,
        maxReplicas: 1,
        scaleToZeroAfterSeconds: 600,
      })
    ).body;
    try {
      // the activator answers 503 after 60 s: a 200 means a replica was placed on a new slice before that
      const res = await as(t.auth).post(`/v1/endpoints/${ep.id}/invoke`, { input: 'hello' });
      expect(res.status).toBe(200);
      const [alloc] = await sys.db.allocation.findMany({ where: { endpointId: ep.id, endedAt: null } });
      expect(alloc!.migProfile).toBe('3g.40gb');
      const requested = await sys.db.event.findMany({ where: { type: 'gpu.mig.requested' }, orderBy: { createdAt: 'asc' } });
      expect(requested.some((e) => e.message.includes('3g.40gb'))).toBe(true);
    } finally {
      await as(t.auth).del(`/v1/endpoints/${ep.id}`);
    }
  }, 90_000);
});
