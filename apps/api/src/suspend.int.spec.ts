import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/** One-click suspend and resume: GPUs freed for others, progress kept. */
describe('suspend and resume (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '50' });
    t = await makeTenant(sys.db, 'suspend-int', { quota: { guaranteed: 64, limit: 128 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const http = () => sys.http();
  const get = async (id: string) => (await http().get(`/v1/jobs/${id}`).set('Authorization', t.auth)).body;
  const post = (path: string) => http().post(path).set('Authorization', t.auth);
  const submit = (body: object) => post('/v1/jobs').send({ teamId: t.team.id, kind: 'training', resources: { gpus: 8, gpuModel: 'A100-80GB' }, ...body });

  it('suspend frees the GPUs for another job; resume finishes the rest of the work', async () => {
    const a = (await submit({ name: 'long-train', simulation: { durationSeconds: 150 } })).body;
    const running = await eventually(async () => {
      const j = await get(a.id);
      return j.state === 'running' && j.progress > 0.3 ? j : undefined;
    });
    const node = running.placement[0].nodeId as string;
    // Only that node may take work now, so the next job can only run on the GPUs a frees.
    const others = await sys.db.node.findMany({ where: { id: { not: node } }, select: { id: true } });
    await sys.db.node.updateMany({ where: { id: { in: others.map((o) => o.id) } }, data: { state: 'cordoned' } });
    try {
      const s = await post(`/v1/jobs/${a.id}/suspend`);
      expect(s.status).toBe(200);
      expect(['suspending', 'suspended']).toContain(s.body.state);
      const suspended = await eventually(async () => {
        const j = await get(a.id);
        return j.state === 'suspended' ? j : undefined;
      });
      expect(suspended.placement).toEqual([]);
      expect(suspended.progress).toBeGreaterThan(0.3);
      expect(suspended.progress).toBeLessThan(1);
      expect(await sys.db.allocation.count({ where: { jobId: a.id, endedAt: null } })).toBe(0);

      const b = (await submit({ name: 'takes-the-gpus', simulation: { durationSeconds: 1000 } })).body;
      const bRunning = await eventually(async () => {
        const j = await get(b.id);
        return j.state === 'running' ? j : undefined;
      });
      expect(bRunning.placement[0].nodeId).toBe(node);
      await post(`/v1/jobs/${b.id}/cancel`);

      const r = await post(`/v1/jobs/${a.id}/resume`);
      expect(r.status).toBe(200);
      expect(r.body.state).toBe('pending');
      expect(r.body.progress).toBeCloseTo(suspended.progress, 5);
      const resumedRunning = await eventually(async () => {
        const j = await get(a.id);
        return j.state === 'running' ? j : undefined;
      });
      expect(resumedRunning.progress).toBeGreaterThanOrEqual(suspended.progress);
      const done = await eventually(async () => {
        const j = await get(a.id);
        return j.state === 'succeeded' ? j : undefined;
      });
      expect(done.events.map((e: { type: string }) => e.type)).toEqual(
        expect.arrayContaining(['job.suspending', 'job.suspended', 'job.resumed', 'job.succeeded']),
      );
    } finally {
      await sys.db.node.updateMany({ data: { state: 'ready' } });
    }
  });

  it.each([['a batch job (cannot be checkpointed)', { kind: 'batch' }, 'cannot be suspended']])(
    'refuses to suspend %s with 409',
    async (_n, body, wantMessage) => {
      const j = (await submit({ name: 'no-suspend', ...body, simulation: { durationSeconds: 500 } })).body;
      const res = await post(`/v1/jobs/${j.id}/suspend`);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('invalid_state');
      expect(res.body.error.message).toContain(wantMessage);
      await post(`/v1/jobs/${j.id}/cancel`);
    },
  );

  it('refuses to suspend a finished job and to resume one that is not suspended (409)', async () => {
    const j = (await submit({ name: 'short', resources: { gpus: 1 }, simulation: { durationSeconds: 2 } })).body;
    await eventually(async () => (await get(j.id)).state === 'succeeded');
    const s = await post(`/v1/jobs/${j.id}/suspend`);
    expect(s.status).toBe(409);
    expect(s.body.error.message).toContain('succeeded');
    const r = await post(`/v1/jobs/${j.id}/resume`);
    expect(r.status).toBe(409);
  });

  it('holds a pending job at once and releases nothing it never had', async () => {
    await sys.db.node.updateMany({ data: { state: 'cordoned' } });
    try {
      const j = (await submit({ name: 'held', simulation: { durationSeconds: 5 } })).body;
      const s = await post(`/v1/jobs/${j.id}/suspend`);
      expect(s.status).toBe(200);
      expect(s.body.state).toBe('suspended');
    } finally {
      await sys.db.node.updateMany({ data: { state: 'ready' } });
    }
  });
});
