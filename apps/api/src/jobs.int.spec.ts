import { createApiKey, createTeam } from '@gantry/db';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { JobsRepository } from './modules/jobs/jobs.repository';

/** The walking skeleton end to end: REST -> queue -> engine -> commit -> simulated GPUs -> back. */
describe('jobs through the whole system (real Postgres and Redis)', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  let globex: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem();
    acme = await makeTenant(sys.db, 'acme-int', { quota: { guaranteed: 16, limit: 40 } });
    globex = await makeTenant(sys.db, 'globex-int');
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const submit = (body: object, auth = acme.auth) => sys.http().post('/v1/jobs').set('Authorization', auth).send(body);
  /** Runs `fn` with every H100 node cordoned (jobs asking for H100s wait pending), then makes them ready again. */
  const withH100sCordoned = async (fn: () => Promise<void>) => {
    const ids = (await sys.db.node.findMany({ where: { gpus: { some: { model: 'H100-80GB' } } }, select: { id: true } })).map((n) => n.id);
    await sys.db.node.updateMany({ where: { id: { in: ids } }, data: { state: 'cordoned' } });
    try {
      await fn();
    } finally {
      await sys.db.node.updateMany({ where: { id: { in: ids } }, data: { state: 'ready' } });
    }
  };
  const job = (overrides: object = {}) => ({
    teamId: acme.team.id,
    name: 'train-1',
    kind: 'training',
    resources: { gpus: 2, gpuModel: 'H100-80GB' },
    simulation: { durationSeconds: 5 },
    ...overrides,
  });

  it('runs a job pending -> running -> succeeded and releases its GPUs', async () => {
    const res = await submit(job());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ state: 'pending', teamId: acme.team.id, replicas: 1 });
    const id = res.body.id as string;

    const seen = new Set<string>();
    const done = await eventually(async () => {
      const r = await sys.http().get(`/v1/jobs/${id}`).set('Authorization', acme.auth);
      seen.add(r.body.state);
      if (r.body.state === 'running') {
        expect(r.body.placement).toHaveLength(1);
        expect(r.body.placement[0].gpus).toHaveLength(2);
      }
      return r.body.state === 'succeeded' ? r.body : undefined;
    });
    expect(done.progress).toBe(1);
    expect(done.events.map((e: { type: string }) => e.type)).toEqual(['job.submitted', 'job.placed', 'job.running', 'job.succeeded']);
    expect(done.placement).toEqual([]);
    expect(await sys.db.allocation.count({ where: { jobId: id, endedAt: null } })).toBe(0);
    expect(await sys.db.allocation.count({ where: { jobId: id } })).toBe(2);
  });

  it('places a gang of 4 x 8 GPUs on four different nodes, all or nothing', async () => {
    // 32 GPUs is above the team's 16 guaranteed: only preemptible work borrows up to the limit.
    const res = await submit(
      job({ name: 'gang', replicas: 4, resources: { gpus: 8, gpuModel: 'A100-80GB' }, preemptible: true, simulation: { durationSeconds: 500 } }),
    );
    expect(res.status).toBe(201);
    const running = await eventually(async () => {
      const r = await sys.http().get(`/v1/jobs/${res.body.id}`).set('Authorization', acme.auth);
      return r.body.state === 'running' ? r.body : undefined;
    });
    const nodes = new Set(running.placement.map((p: { nodeId: string }) => p.nodeId));
    expect(nodes.size).toBe(4);
    for (const p of running.placement) expect(p.gpus).toHaveLength(8);
    const cancel = await sys.http().post(`/v1/jobs/${res.body.id}/cancel`).set('Authorization', acme.auth);
    expect(cancel.status).toBe(200);
    expect(cancel.body.state).toBe('cancelled');
    expect(await sys.db.allocation.count({ where: { jobId: res.body.id, endedAt: null } })).toBe(0);
  });

  it('keeps a job that fits the quota but not the free capacity pending, with a reason', async () => {
    const h100Nodes = await sys.db.node.findMany({ where: { gpus: { some: { model: 'H100-80GB' } } }, orderBy: { name: 'asc' } });
    const cordoned = h100Nodes.slice(1).map((n) => n.id);
    await sys.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'cordoned' } });
    try {
      const res = await submit(job({ name: 'waits', replicas: 2, resources: { gpus: 8, gpuModel: 'H100-80GB' } }));
      expect(res.status).toBe(201);
      const pending = await eventually(async () => {
        const r = await sys.http().get(`/v1/jobs/${res.body.id}`).set('Authorization', acme.auth);
        return r.body.state === 'pending' && r.body.reasons[0]?.code !== 'queued' ? r.body : undefined;
      });
      expect(pending.queuePosition).toBeGreaterThanOrEqual(1);
      expect(pending.reasons.map((r: { message: string }) => r.message).join(' ')).toMatch(/8/);
      expect(await sys.db.allocation.count({ where: { jobId: res.body.id } })).toBe(0);
      // Capacity comes back: the job is placed without anyone touching it.
      await sys.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'ready' } });
      await eventually(async () => {
        const r = await sys.http().get(`/v1/jobs/${res.body.id}`).set('Authorization', acme.auth);
        return r.body.state === 'running';
      });
      await sys.http().post(`/v1/jobs/${res.body.id}/cancel`).set('Authorization', acme.auth);
    } finally {
      await sys.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'ready' } });
    }
  });

  it("summarises a team's jobs for the Overview: counts per state and the head of the queue in queue order", async () => {
    const initech = await makeTenant(sys.db, 'initech-summary');
    const other = await createTeam(sys.db, initech.tenant.id, { name: 'other', slug: 'other', quota: { guaranteed: 8, limit: 16 } });
    const otherKey = await createApiKey(sys.db, {
      name: 'other',
      role: 'member',
      tenantId: initech.tenant.id,
      teamId: other.id,
      scopes: ['jobs:read', 'jobs:write'],
    });
    const waiting = (name: string, priority: string, teamId = initech.team.id) =>
      job({ teamId, name, priority, resources: { gpus: 1, gpuModel: 'H100-80GB' } });
    const summary = async (auth: string, query = '') => {
      const r = await sys.http().get(`/v1/jobs/summary${query}`).set('Authorization', auth);
      expect(r.status).toBe(200);
      return r.body as { counts: Record<string, number>; queueHead: { id: string; state: string; queuePosition: number }[] };
    };
    await withH100sCordoned(async () => {
      const older = (await submit(waiting('older', 'normal'), initech.auth)).body.id as string;
      const newer = (await submit(waiting('newer', 'normal'), initech.auth)).body.id as string;
      const urgent = (await submit(waiting('urgent', 'high'), initech.auth)).body.id as string;
      const theirs = (await submit(waiting('theirs', 'high', other.id), `Bearer ${otherKey.key}`)).body.id as string;
      expect([older, newer, urgent, theirs].every((id) => typeof id === 'string')).toBe(true);
      const done = (
        await submit(
          job({ teamId: initech.team.id, name: 'quick', resources: { gpus: 1, gpuModel: 'A100-80GB' }, simulation: { durationSeconds: 1 } }),
          initech.auth,
        )
      ).body.id as string;
      await eventually(async () => (await sys.db.job.findUnique({ where: { id: done } }))?.state === 'succeeded');

      const mine = await eventually(async () => {
        const s = await summary(initech.auth);
        return s.queueHead.length === 3 ? s : undefined;
      });
      expect(mine.counts).toEqual({ pending: 3, starting: 0, running: 0, suspending: 0, suspended: 0, succeeded: 1, failed: 0, cancelled: 0 });
      // Priority first, then age; the other team's job is not shown to this team's key, though it counts in the tenant's queue positions.
      expect(mine.queueHead.map((j) => j.id)).toEqual([urgent, older, newer]);
      expect(mine.queueHead.every((j) => j.state === 'pending')).toBe(true);
      const positions = mine.queueHead.map((j) => j.queuePosition);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      for (const j of mine.queueHead) {
        expect((await sys.http().get(`/v1/jobs/${j.id}`).set('Authorization', initech.auth)).body.queuePosition).toBe(j.queuePosition);
      }
      const list = await sys.http().get('/v1/jobs?limit=500').set('Authorization', initech.auth);
      expect(Object.fromEntries(list.body.items.map((j: { id: string; queuePosition?: number }) => [j.id, j.queuePosition]))).toMatchObject(
        Object.fromEntries(mine.queueHead.map((j) => [j.id, j.queuePosition])),
      );

      const theirView = await summary(`Bearer ${otherKey.key}`);
      expect(theirView.queueHead.map((j) => j.id)).toEqual([theirs]);
      expect(theirView.counts.pending).toBe(1);
      // A team-bound key asking for its sibling's summary sees nothing of it; another tenant sees nothing at all.
      const sibling = await summary(`Bearer ${otherKey.key}`, `?teamId=${initech.team.id}`);
      expect(sibling.queueHead).toEqual([]);
      expect(sibling.counts.pending).toBe(0);
      const stranger = await summary(globex.auth);
      expect(stranger.queueHead.map((j) => j.id)).not.toContain(urgent);

      const bad = await sys
        .http()
        .get(`/v1/jobs/summary?teamId=${'x'.repeat(65)}`)
        .set('Authorization', initech.auth);
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toMatch(/teamId/);
      expect((await sys.http().get('/v1/jobs/summary?state=pending').set('Authorization', initech.auth)).status).toBe(400);

      // A job that leaves the queue leaves its head at once, even when the order is reused.
      await sys.http().post(`/v1/jobs/${urgent}/cancel`).set('Authorization', initech.auth);
      const after = await summary(initech.auth);
      expect(after.queueHead.map((j) => j.id)).toEqual([older, newer]);
      expect(after.counts).toMatchObject({ pending: 2, cancelled: 1 });
      await sys.http().post(`/v1/jobs/${older}/cancel`).set('Authorization', initech.auth);
      await sys.http().post(`/v1/jobs/${newer}/cancel`).set('Authorization', initech.auth);
      await sys.http().post(`/v1/jobs/${theirs}/cancel`).set('Authorization', `Bearer ${otherKey.key}`);
    });
  });

  it("orders the head of a whole tenant's queue from each team's oldest jobs alone, as the full queue starts", async () => {
    const umbrella = await makeTenant(sys.db, 'umbrella-head');
    const second = await createTeam(sys.db, umbrella.tenant.id, { name: 'second', slug: 'second', quota: { guaranteed: 32, limit: 64 } });
    const admin = `Bearer ${(await createApiKey(sys.db, { name: 'admin', role: 'tenant_admin', tenantId: umbrella.tenant.id, scopes: ['jobs:read', 'jobs:write'] })).key}`;
    const repo = sys.api.get(JobsRepository);
    const scope = { kind: 'tenant' as const, tenantId: umbrella.tenant.id, teamId: null };
    await withH100sCordoned(async () => {
      // Team 1: ten normal jobs and two high; team 2: three normal of two sizes and one low, submitted interleaved.
      const plan: [string, string, number][] = [
        ...Array.from({ length: 10 }, (_, i): [string, string, number] => [umbrella.team.id, 'normal', 1 + (i % 2)]),
        [umbrella.team.id, 'high', 1],
        [second.id, 'normal', 2],
        [second.id, 'low', 1],
        [umbrella.team.id, 'high', 2],
        [second.id, 'normal', 1],
        [second.id, 'normal', 1],
      ];
      const ids: string[] = [];
      for (const [teamId, priority, gpus] of plan) {
        const res = await submit(job({ teamId, name: `head-${ids.length}`, priority, resources: { gpus, gpuModel: 'H100-80GB' } }), admin);
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const full = (await repo.pendingQueue(scope)).map((j) => j.id);
      expect(full).toHaveLength(plan.length);
      for (const size of [1, 3, 8, 20]) expect((await repo.queueHead(scope, size)).map((j) => j.id)).toEqual(full.slice(0, size));
      const summary = (await sys.http().get('/v1/jobs/summary').set('Authorization', admin)).body;
      expect(summary.counts.pending).toBe(plan.length);
      expect(summary.queueHead.map((j: { id: string }) => j.id)).toEqual(full.slice(0, 8));
      expect(summary.queueHead.map((j: { queuePosition: number }) => j.queuePosition)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      for (const id of ids) await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', admin);
      // A failed read of the fair-share history fails the call, even with nothing left to order (never an unhandled rejection).
      await expect(repo.queueHead(scope, 8, Promise.reject(new Error('history unavailable')))).rejects.toThrow('history unavailable');
    });
  });

  it('cancels a job at any moment of its life, even while the scheduler places it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await submit(job({ name: `cancel-race-${i}`, simulation: { durationSeconds: 500 } }));
      await new Promise((r) => setTimeout(r, i * 15));
      const c = await sys.http().post(`/v1/jobs/${res.body.id}/cancel`).set('Authorization', acme.auth);
      expect(c.status).toBe(200);
      expect(c.body.state).toBe('cancelled');
      ids.push(res.body.id);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(await sys.db.allocation.count({ where: { jobId: { in: ids }, endedAt: null } })).toBe(0);
    expect(await sys.db.job.count({ where: { id: { in: ids }, state: { not: 'cancelled' } } })).toBe(0);
    const again = await sys.http().post(`/v1/jobs/${ids[0]}/cancel`).set('Authorization', acme.auth);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state');
  });

  it('refuses a job larger than the team quota limit with 409 quota_exceeded', async () => {
    const res = await submit(job({ name: 'huge', replicas: 6, resources: { gpus: 8 } }));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('quota_exceeded');
    expect(res.body.error.message).toMatch(/48 GPUs.*limit.*40/);
  });

  it.each([
    ['a missing name', { name: undefined }, 'name'],
    ['an unknown kind', { kind: 'rocket' }, 'kind'],
    ['two resource kinds at once', { resources: { gpus: 1, gpuFraction: 0.5 } }, 'resources'],
    ['a fraction of 1.5', { resources: { gpuFraction: 1.5 } }, 'resources.gpuFraction'],
    ['more GPUs per replica than any node has', { resources: { gpus: 9 } }, 'resources.gpus'],
    ['an unknown GPU model', { resources: { gpus: 1, gpuModel: 'B200' } }, 'resources.gpuModel'],
    ['an unknown MIG profile', { resources: { migProfile: '5g.50gb' } }, 'resources.migProfile'],
    ['a field that does not exist', { color: 'red' }, '(body)'],
  ])('answers 400 naming the field for %s', async (_name, override, wantField) => {
    const res = await submit(job(override));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(wantField);
    expect(await sys.db.job.count({ where: { name: (override as { name?: string }).name ?? 'train-1', teamId: acme.team.id, state: 'failed' } })).toBe(0);
  });

  it('answers 400 invalid_json for malformed JSON', async () => {
    const res = await sys.http().post('/v1/jobs').set('Authorization', acme.auth).set('Content-Type', 'application/json').send('{"teamId": ');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });

  it.each([
    ['no key', undefined],
    ['a malformed key', 'Bearer nope'],
    ['an unknown key', 'Bearer gk_unknown123_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('answers 401 with %s', async (_n, auth) => {
    const req = sys.http().get('/v1/jobs');
    const res = await (auth ? req.set('Authorization', auth) : req);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
  });

  it("never shows or changes another tenant's jobs and teams (404)", async () => {
    const mine = await submit(job({ name: 'secret' }));
    expect(mine.status).toBe(201);
    const other = globex.auth;
    expect((await sys.http().get(`/v1/jobs/${mine.body.id}`).set('Authorization', other)).status).toBe(404);
    expect((await sys.http().post(`/v1/jobs/${mine.body.id}/cancel`).set('Authorization', other)).status).toBe(404);
    expect((await sys.http().get(`/v1/teams/${acme.team.id}`).set('Authorization', other)).status).toBe(404);
    const list = await sys.http().get('/v1/jobs?limit=500').set('Authorization', other);
    expect(list.body.items.map((j: { id: string }) => j.id)).not.toContain(mine.body.id);
    const cross = await submit(job({ teamId: acme.team.id }), other);
    expect(cross.status).toBe(404);
    expect(await sys.db.job.count({ where: { tenantId: globex.tenant.id } })).toBe(0);
  });

  it("keeps a team-bound key inside its team even when it asks for a sibling team's jobs", async () => {
    const sibling = await createTeam(sys.db, acme.tenant.id, { name: 'sibling', slug: 'sibling' });
    const key = await createApiKey(sys.db, {
      name: 'sibling',
      role: 'member',
      tenantId: acme.tenant.id,
      teamId: sibling.id,
      scopes: ['jobs:read', 'jobs:write'],
    });
    const mine = await submit(job({ name: 'team-private' }));
    const res = await sys.http().get(`/v1/jobs?teamId=${acme.team.id}`).set('Authorization', `Bearer ${key.key}`);
    expect(res.status).toBe(200);
    expect(res.body.items.map((j: { id: string }) => j.id)).not.toContain(mine.body.id);
    expect((await sys.http().get(`/v1/jobs/${mine.body.id}`).set('Authorization', `Bearer ${key.key}`)).status).toBe(404);
  });

  it('returns the first job for a retried Idempotency-Key, never a second one', async () => {
    const first = await submit(job({ name: 'idem' })).set('Idempotency-Key', 'retry-1');
    const again = await submit(job({ name: 'idem' })).set('Idempotency-Key', 'retry-1');
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(await sys.db.job.count({ where: { name: 'idem' } })).toBe(1);
  });

  it('serves health, readiness and the OpenAPI document without a key', async () => {
    expect((await sys.http().get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await sys.http().get('/readyz')).body).toMatchObject({ status: 'ready' });
    const doc = await sys.http().get('/openapi.json');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/v1/jobs', '/v1/jobs/{id}', '/v1/nodes', '/v1/gpus']));
  });
});
