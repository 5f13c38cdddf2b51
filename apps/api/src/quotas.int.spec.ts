import { createApiKey, createTeam } from '@gantry/db';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

const ADMIN = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
const ALL = ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write', 'cluster:read'];

/** Quota administration: the rules (400/409 naming the rule), who may change what, usage. */
describe('team quotas (real Postgres)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let tenantAdmin: string;
  let teamAdmin: string;
  let siblingId: string;

  beforeAll(async () => {
    sys = await startSystem();
    t = await makeTenant(sys.db, 'quota-int', { quota: { guaranteed: 8, limit: 16 } });
    const sibling = await createTeam(sys.db, t.tenant.id, { name: 'sibling', slug: 'sibling', quota: { guaranteed: 8, limit: 16 } });
    siblingId = sibling.id;
    tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'ta', role: 'tenant_admin', tenantId: t.tenant.id, scopes: ALL })).key}`;
    teamAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'tm', role: 'team_admin', tenantId: t.tenant.id, teamId: t.team.id, scopes: ALL })).key}`;
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const put = (teamId: string, quotas: object[], auth = tenantAdmin) =>
    sys.http().put(`/v1/teams/${teamId}/quotas`).set('Authorization', auth).send({ quotas });
  const get = (path: string, auth = tenantAdmin) => sys.http().get(path).set('Authorization', auth);

  it('lets the tenant admin set quotas per flavour and reads them back', async () => {
    const res = await put(t.team.id, [
      { gpuModel: '*', guaranteed: 8, limit: 16 },
      { gpuModel: 'H100-80GB', guaranteed: 2.5, limit: 4, gpuHourBudget: 1000, budgetPolicy: 'preemptible-only' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.quotas).toEqual([
      expect.objectContaining({ gpuModel: '*', guaranteed: 8, limit: 16, gpuHourBudget: null, budgetPolicy: 'block' }),
      expect.objectContaining({ gpuModel: 'H100-80GB', guaranteed: 2.5, limit: 4, gpuHourBudget: 1000, budgetPolicy: 'preemptible-only' }),
    ]);
    expect((await get(`/v1/teams/${t.team.id}/quotas`, t.auth)).status).toBe(403); // the member key lacks quotas:read
    expect((await get(`/v1/teams/${t.team.id}/quotas`, teamAdmin)).body.quotas).toHaveLength(2);
  });

  it.each([
    ['a negative guaranteed', [{ gpuModel: '*', guaranteed: -1, limit: 4 }], 400, 'non_negative'],
    ['a negative limit', [{ gpuModel: '*', guaranteed: 0, limit: -4 }], 400, 'non_negative'],
    ['limit below guaranteed', [{ gpuModel: '*', guaranteed: 8, limit: 4 }], 400, 'limit_at_least_guaranteed'],
    [
      'the same flavour twice',
      [
        { gpuModel: '*', guaranteed: 1, limit: 4 },
        { gpuModel: '*', guaranteed: 1, limit: 4 },
      ],
      400,
      'one_row_per_flavour',
    ],
  ])('refuses %s, naming the rule', async (_n, quotas, wantStatus, wantRule) => {
    const res = await put(t.team.id, quotas);
    expect(res.status).toBe(wantStatus);
    expect(res.body.error.message).toContain(`rule ${wantRule}`);
  });

  it('refuses a malformed flavour or an unknown field with 400', async () => {
    expect((await put(t.team.id, [{ gpuModel: 'H100 80GB', guaranteed: 1, limit: 1 }])).status).toBe(400);
    expect((await put(t.team.id, [{ gpuModel: '*', guaranteed: 1, limit: 1, borrowing: 3 }])).status).toBe(400);
  });

  it('keeps the teams within the tenant total set by the platform admin (409 naming the rule)', async () => {
    // Only the platform admin sets the total.
    const denied = await sys.http().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', tenantAdmin).send({ gpuTotal: 1000 });
    expect(denied.status).toBe(403);
    const below = await sys.http().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', ADMIN).send({ gpuTotal: 10 });
    expect(below.status).toBe(409);
    expect(below.body.error.message).toContain('rule tenant_total_below_guaranteed');
    const ok = await sys.http().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', ADMIN).send({ gpuTotal: 24 });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ gpuTotal: 24, guaranteedSum: 18.5 });
    const over = await put(siblingId, [{ gpuModel: '*', guaranteed: 16, limit: 16 }]);
    expect(over.status).toBe(409);
    expect(over.body.error.code).toBe('quota_exceeded');
    expect(over.body.error.message).toContain('rule tenant_total_guaranteed');
    const limitOver = await put(siblingId, [{ gpuModel: '*', guaranteed: 8, limit: 32 }]);
    expect(limitOver.status).toBe(409);
    expect(limitOver.body.error.message).toContain('rule tenant_total_limit');
    expect((await get(`/v1/teams/${siblingId}/quotas`)).body.quotas[0]).toMatchObject({ guaranteed: 8, limit: 16 });
    await sys.http().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', ADMIN).send({ gpuTotal: null });
  });

  it('keeps the values set before ceilings existed as the ceilings (a team admin lowers, then restores)', async () => {
    // The sibling's row comes from the seed factory: no ceilings recorded.
    const siblingAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'sa', role: 'team_admin', tenantId: t.tenant.id, teamId: siblingId, scopes: ALL })).key}`;
    expect((await put(siblingId, [{ gpuModel: '*', guaranteed: 4, limit: 10 }], siblingAdmin)).status).toBe(200);
    expect((await put(siblingId, [{ gpuModel: '*', guaranteed: 8, limit: 16 }], siblingAdmin)).status).toBe(200);
    expect((await put(siblingId, [{ gpuModel: '*', guaranteed: 8, limit: 17 }], siblingAdmin)).status).toBe(403);
  });

  it('lets a team admin move its quota within what the tenant admin set, never above', async () => {
    await put(t.team.id, [{ gpuModel: '*', guaranteed: 8, limit: 16 }]);
    const raise = await put(t.team.id, [{ gpuModel: '*', guaranteed: 8, limit: 32 }], teamAdmin);
    expect(raise.status).toBe(403);
    expect(raise.body.error.message).toContain('rule team_admin_ceiling');
    const lower = await put(t.team.id, [{ gpuModel: '*', guaranteed: 4, limit: 8 }], teamAdmin);
    expect(lower.status).toBe(200);
    const back = await put(t.team.id, [{ gpuModel: '*', guaranteed: 8, limit: 16 }], teamAdmin);
    expect(back.status).toBe(200);
    const add = await put(
      t.team.id,
      [
        { gpuModel: '*', guaranteed: 8, limit: 16 },
        { gpuModel: 'A100-80GB', guaranteed: 1, limit: 1 },
      ],
      teamAdmin,
    );
    expect(add.status).toBe(403);
    const removeAll = await put(t.team.id, [], teamAdmin);
    expect(removeAll.status).toBe(403);
    // Another team of the tenant is not its to change (a team-bound key does not even see it).
    expect((await put(siblingId, [{ gpuModel: '*', guaranteed: 1, limit: 1 }], teamAdmin)).status).toBe(404);
    // A member cannot change quotas at all.
    const member = `Bearer ${(await createApiKey(sys.db, { name: 'mem', role: 'member', tenantId: t.tenant.id, teamId: t.team.id, scopes: ALL })).key}`;
    expect((await put(t.team.id, [{ gpuModel: '*', guaranteed: 8, limit: 16 }], member)).status).toBe(403);
  });

  it('reports GPUs in use by flavour against the quota and GPU-hours this month', async () => {
    await put(t.team.id, [{ gpuModel: '*', guaranteed: 8, limit: 16 }]);
    const job = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', t.auth)
      .send({ teamId: t.team.id, name: 'use', kind: 'training', resources: { gpus: 2, gpuModel: 'A100-80GB' } });
    expect(job.status).toBe(201);
    await eventually(async () => (await get(`/v1/jobs/${job.body.id}`, t.auth)).body.state === 'running');
    await new Promise((r) => setTimeout(r, 1200));
    const usage = await get(`/v1/teams/${t.team.id}/usage`);
    expect(usage.status).toBe(200);
    expect(usage.body.flavours).toEqual([expect.objectContaining({ gpuModel: '*', inUse: 2, borrowed: 0, guaranteed: 8, limit: 16 })]);
    expect(usage.body.byModel).toEqual([{ gpuModel: 'A100-80GB', inUse: 2 }]);
    expect(usage.body.gpuHours).toBeGreaterThan(0);
    expect(new Date(usage.body.period.start).getUTCDate()).toBe(1);
    await sys.http().post(`/v1/jobs/${job.body.id}/cancel`).set('Authorization', t.auth);
  });

  it('refuses an API key with an unknown scope (400)', async () => {
    const res = await sys
      .http()
      .post('/v1/api-keys')
      .set('Authorization', tenantAdmin)
      .send({ name: 'bad', scopes: ['jobs:read', 'rockets:launch'] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('scopes');
  });

  describe('submission says at once what could never run, and why', () => {
    const submit = (body: object) =>
      sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', tenantAdmin)
        .send({ teamId: siblingId, name: 'never', kind: 'training', simulation: { durationSeconds: 60 }, ...body });

    it('checks every quota row that governs the job: its model\'s row and the "*" row', async () => {
      expect(
        (
          await put(siblingId, [
            { gpuModel: 'H100-80GB', guaranteed: 8, limit: 16 },
            { gpuModel: '*', guaranteed: 4, limit: 4 },
          ])
        ).status,
      ).toBe(200);
      const res = await submit({ resources: { gpus: 8, gpuModel: 'H100-80GB' }, preemptible: true });
      expect(res.status).toBe(409);
      expect(res.body.error.message).toContain('can never fit: the team quota limit for all GPU models is 4');
    });

    it("refuses a job larger than the cluster's GPUs of its model, naming the cluster as the reason", async () => {
      const h100 = await sys.db.gpu.count({ where: { model: 'H100-80GB' } });
      expect(
        (
          await put(siblingId, [
            { gpuModel: '*', guaranteed: 8, limit: 16 },
            { gpuModel: 'H100-80GB', guaranteed: 8, limit: 16 },
          ])
        ).status,
      ).toBe(200);
      const replicas = Math.floor(h100 / 8) + 1;
      const res = await submit({ replicas, resources: { gpus: 8, gpuModel: 'H100-80GB' }, preemptible: true });
      expect(res.status).toBe(409);
      expect(res.body.error.message).toBe(`the job needs ${replicas * 8} GPUs and can never fit: the cluster has ${h100} H100-80GB GPUs in all`);
      expect(res.body.error.details[0].field).toBe('resources');
    });

    it('refuses what no quota row covers (capacity is deny-by-default)', async () => {
      expect((await put(siblingId, [{ gpuModel: 'H100-80GB', guaranteed: 8, limit: 16 }])).status).toBe(200);
      const res = await submit({ resources: { gpus: 1, gpuModel: 'A100-80GB' } });
      expect(res.status).toBe(409);
      expect(res.body.error.message).toContain('no quota for A100-80GB');
    });
  });
});
