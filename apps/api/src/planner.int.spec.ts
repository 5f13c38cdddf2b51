import { PlannerRepository } from './modules/planner/planner.repository';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/** The what-if planner over HTTP: runs queued, replayed by the worker on a thread, stored; bad input refused. */
describe('planner runs (real Postgres and Redis)', () => {
  let sys: TestSystem;
  let admin: Awaited<ReturnType<typeof makeTenant>>;
  let other: Awaited<ReturnType<typeof makeTenant>>;
  let member: Awaited<ReturnType<typeof makeTenant>>;
  const platform = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem();
    admin = await makeTenant(sys.db, 'planner-int', { role: 'tenant_admin' });
    other = await makeTenant(sys.db, 'planner-other', { role: 'tenant_admin' });
    member = await makeTenant(sys.db, 'planner-member');
  });
  afterAll(async () => sys?.close());

  const post = (path: string, body: object, auth = admin.auth) => sys.http().post(path).set('Authorization', auth).send(body);
  const get = (id: string, auth = admin.auth) => sys.http().get(`/v1/planner/runs/${id}`).set('Authorization', auth);
  const ended = (id: string) =>
    eventually(async () => {
      const r = (await get(id)).body;
      return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    }, 50_000);

  const HEAD = 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time';
  const small = { kind: 'generator', jobs: 300, meanInterarrivalSeconds: 20, meanDurationSeconds: 1800, mix: { share: 0.9, whole: 0.1, multi: 0 } };

  it.each([
    [
      'a trace without deletion_time',
      { kind: 'csv', csv: 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\np0,1,1,1,1000,0' },
      { kind: 'openb' },
      'workload.csv[row 0].deletion_time',
    ],
    [
      'a malformed number',
      { kind: 'csv', csv: `${HEAD}\np0,1000,1,1,1000,,LS,Running,0,10,0\np1,1000,1,1,x,,LS,Running,0,10,0` },
      { kind: 'openb' },
      'workload.csv[row 2].gpu_milli',
    ],
    [
      'a negative duration',
      { kind: 'csv', csv: `${HEAD}\np0,1000,1,1,1000,,LS,Running,0,10,0\np1,1000,1,1,1000,,LS,Running,50,20,40` },
      { kind: 'openb' },
      'workload.csv[row 2].deletion_time',
    ],
    [
      'an unknown GPU model in the trace',
      { kind: 'csv', csv: `${HEAD}\np0,1000,1,1,1000,Z9,LS,Running,0,10,0` },
      { kind: 'openb' },
      'workload.csv[row 1].gpu_spec',
    ],
    [
      'an unknown GPU model in the cluster',
      small,
      { kind: 'csv', csv: 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,A100-80GB\nn1,64000,262144,8,Q900' },
      'cluster.csv[row 2].model',
    ],
    ['a cluster where nothing fits', small, { kind: 'csv', csv: 'sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,T4' }, 'cluster.nodes'],
  ])('refuses %s with 400 naming the row and field', async (_name, workload, cluster, wantField) => {
    const res = await post('/v1/planner/runs', { workload, cluster, policies: ['gantry', 'kubernetes-default'] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(wantField);
  });

  it('is for platform and tenant admins only', async () => {
    const res = await post('/v1/planner/runs', { workload: small, cluster: { kind: 'openb', size: 40 } }, member.auth);
    expect(res.status).toBe(403);
  });

  it('replays a run to the end and stores the comparison; another tenant gets 404, the platform admin reads it', async () => {
    const res = await post('/v1/planner/runs', { workload: small, cluster: { kind: 'openb', size: 40 }, policies: ['gantry', 'kubernetes-default'] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued', progress: 0, result: null });
    const run = await ended(res.body.id);
    expect(run).toMatchObject({ status: 'succeeded', progress: 1, error: null });
    expect(run.result.policies.map((p: { policy: string }) => p.policy)).toEqual(['gantry', 'kubernetes-default']);
    expect(run.result.jobs).toBe(300);
    const [g, k] = run.result.policies;
    // shares take a whole GPU under kubernetes-default: the GPUs holding work are far less used
    expect(g.smPerBusyGpuPct).toBeGreaterThan(k.smPerBusyGpuPct);
    expect(run.result.gantryVsKubernetesDefault).toEqual(expect.objectContaining({ energyKWh: expect.any(Number) }));
    expect((await get(res.body.id, other.auth)).status).toBe(404);
    expect((await get(res.body.id, platform)).body.status).toBe('succeeded');
    const list = await sys.http().get('/v1/planner/runs').set('Authorization', other.auth);
    expect(list.body.items).toEqual([]);
  });

  it('a progress write that lands after the run ended leaves the ended run as it was', async () => {
    const runs = sys.worker.get(PlannerRepository);
    const row = await sys.db.plannerRun.create({ data: { tenantId: admin.tenant.id, createdByKeyId: 'progress-race', spec: {}, policies: ['gantry'] } });
    expect(await runs.claim(row.id)).toBe(true);
    expect(await runs.progress(row.id, 0.4)).toBe(false);
    expect((await get(row.id)).body).toMatchObject({ status: 'running', progress: 0.4 });
    await runs.finish(row.id, { status: 'succeeded', result: {} });
    expect(await runs.progress(row.id, 0.18)).toBe(false);
    expect((await sys.db.plannerRun.findUniqueOrThrow({ where: { id: row.id } })).progress).toBe(1);
  });

  it('cancels a running replay', async () => {
    const res = await post('/v1/planner/runs', { workload: { kind: 'openb', trace: 'default' }, cluster: { kind: 'openb' } });
    expect(res.status).toBe(202);
    await eventually(async () => ((await get(res.body.id)).body.status === 'running' ? true : undefined), 30_000);
    const c = await post(`/v1/planner/runs/${res.body.id}/cancel`, {});
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ status: 'cancelled', error: 'cancelled by request' });
    expect((await post(`/v1/planner/runs/${res.body.id}/cancel`, {})).status).toBe(409);
  });

  it('a run that fails midway ends failed with its reason', async () => {
    const before = process.env.GANTRY_PLANNER_TIMEOUT_MS;
    process.env.GANTRY_PLANNER_TIMEOUT_MS = '200';
    try {
      const res = await post('/v1/planner/runs', { workload: { kind: 'openb', trace: 'default' }, cluster: { kind: 'openb' }, policies: ['gantry'] });
      const run = await ended(res.body.id);
      expect(run).toMatchObject({ status: 'failed', error: 'the replay did not finish within 200 ms', result: null });
    } finally {
      if (before === undefined) delete process.env.GANTRY_PLANNER_TIMEOUT_MS;
      else process.env.GANTRY_PLANNER_TIMEOUT_MS = before;
    }
  });
});
