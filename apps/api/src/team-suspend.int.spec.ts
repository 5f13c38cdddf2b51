import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/** Suspending and resuming a whole team in one action (follow-the-sun hand-offs). */
describe('team suspend and resume (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let other: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '50' });
    t = await makeTenant(sys.db, 'team-suspend-int', { quota: { guaranteed: 64, limit: 128 } });
    other = await makeTenant(sys.db, 'team-suspend-other');
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const get = async (id: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', t.auth)).body;
  const post = (path: string, auth = t.auth) => sys.http().post(path).set('Authorization', auth);
  const submit = (body: object) =>
    post('/v1/jobs').send({
      teamId: t.team.id,
      kind: 'training',
      resources: { gpus: 8, gpuModel: 'A100-80GB' },
      simulation: { durationSeconds: 5000 },
      ...body,
    });
  const inState = (id: string, want: string) => eventually(async () => ((await get(id)).state === want ? get(id) : undefined));

  it('suspends the team’s checkpointable jobs (GPUs freed, batch untouched), then resumes them', async () => {
    const a = (await submit({ name: 'train-a' })).body;
    const b = (await submit({ name: 'notebook-b', kind: 'notebook' })).body;
    const batch = (await submit({ name: 'batch-c', kind: 'batch', resources: { gpus: 1 } })).body;
    await Promise.all([inState(a.id, 'running'), inState(b.id, 'running'), inState(batch.id, 'running')]);

    const s = await post(`/v1/teams/${t.team.id}/suspend`);
    expect(s.status).toBe(200);
    expect(s.body.suspended).toBe(2);
    expect([...s.body.jobIds].sort()).toEqual([a.id, b.id].sort());

    for (const id of [a.id, b.id]) {
      const j = await inState(id, 'suspended');
      expect(j.placement).toEqual([]);
      expect(j.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['job.suspending', 'job.suspended']));
      expect(await sys.db.allocation.count({ where: { jobId: id, endedAt: null } })).toBe(0);
    }
    expect((await get(batch.id)).state).toBe('running');
    expect(await sys.db.allocation.count({ where: { jobId: batch.id, endedAt: null } })).toBeGreaterThan(0);

    const r = await post(`/v1/teams/${t.team.id}/resume`);
    expect(r.status).toBe(200);
    expect(r.body.resumed).toBe(2);
    expect([...r.body.jobIds].sort()).toEqual([a.id, b.id].sort());
    for (const id of [a.id, b.id]) {
      const j = await inState(id, 'running');
      expect(j.events.map((e: { type: string }) => e.type)).toContain('job.resumed');
    }

    // Nothing is left to resume: a second resume is a no-op.
    const again = await post(`/v1/teams/${t.team.id}/resume`);
    expect(again.body).toEqual({ resumed: 0, jobIds: [] });
    for (const id of [a.id, b.id, batch.id]) await post(`/v1/jobs/${id}/cancel`);
  });

  it.each([
    ['suspend', 'suspend'],
    ['resume', 'resume'],
  ])('answers 404 to %s of another tenant’s team and touches nothing', async (_n, action) => {
    const j = (await submit({ name: `untouched-${action}`, resources: { gpus: 1 } })).body;
    const res = await post(`/v1/teams/${t.team.id}/${action}`, other.auth);
    expect(res.status).toBe(404);
    expect((await get(j.id)).state).not.toMatch(/^suspend/);
    await post(`/v1/jobs/${j.id}/cancel`);
  });
});
