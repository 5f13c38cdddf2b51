import { createApiKey, createUser } from '@gantry/db';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

const TENANT_SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'quotas:write', 'cluster:read'];

/**
 * Tenant isolation, route by route: a tenant admin of tenant B, holding every tenant scope, walks
 * every route of the OpenAPI document with tenant A's ids. Each answer is a 404 and no answer
 * carries one of A's ids. A new route with an id parameter fails this test until it is listed here.
 */
describe("cross-tenant walk of every route (another tenant's key: 404, never the data)", () => {
  let sys: TestSystem;
  let ids: Record<string, string>;
  let b: string;

  beforeAll(async () => {
    sys = await startSystem();
    const a = await makeTenant(sys.db, 'walk-a', { role: 'tenant_admin', scopes: TENANT_SCOPES, quota: { guaranteed: 8, limit: 16 } });
    const other = await makeTenant(sys.db, 'walk-b', { scopes: TENANT_SCOPES });
    b = `Bearer ${(await createApiKey(sys.db, { name: 'b admin', role: 'tenant_admin', tenantId: other.tenant.id, scopes: TENANT_SCOPES })).key}`;
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
    const job = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', a.auth)
      .send({ teamId: a.team.id, name: 'a-secret', kind: 'training', resources: { gpus: 1 }, simulation: { durationSeconds: 500 } });
    const ep = await sys
      .http()
      .post('/v1/endpoints')
      .set('Authorization', a.auth)
      .send({ teamId: a.team.id, name: 'a-endpoint', model: 'llama-3-8b', resources: { gpus: 1 } });
    const key = await createApiKey(sys.db, { name: 'a key', role: 'member', tenantId: a.tenant.id, teamId: a.team.id, scopes: ['jobs:read'] });
    const user = await createUser(sys.db, { email: 'a-user@walk.example', name: 'A user', role: 'member', tenantId: a.tenant.id, teamId: a.team.id });
    const schedule = await sys
      .http()
      .post(`/v1/teams/${a.team.id}/schedules`)
      .set('Authorization', a.auth)
      .send({ action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin' });
    expect(job.status).toBe(201);
    expect(ep.status).toBe(201);
    const plannerRun = await sys
      .http()
      .post('/v1/planner/runs')
      .set('Authorization', a.auth)
      .send({
        workload: { kind: 'generator', jobs: 20, meanInterarrivalSeconds: 60, meanDurationSeconds: 600, mix: { share: 0.5, whole: 0.5, multi: 0 } },
        cluster: { kind: 'openb', size: 10 },
        policies: ['gantry'],
      });
    const lease = await sys
      .http()
      .post('/v1/bare-metal/leases')
      .set('Authorization', a.auth)
      .send({ teamId: a.team.id, name: 'a-bare-metal', gpuModel: 'A100-80GB', count: 1, image: 'ubuntu-22.04' });
    expect(schedule.status).toBe(201);
    expect(plannerRun.status).toBe(202);
    expect(lease.status).toBe(201);
    const reservation = await sys
      .http()
      .post('/v1/reservations')
      .set('Authorization', a.auth)
      .send({ teamId: a.team.id, name: 'a-secret-hold', gpuModel: 'A100-80GB', gpus: 2, startsAt: '2030-01-07T08:00:00Z', endsAt: '2030-01-07T10:00:00Z' });
    expect(reservation.status).toBe(201);
    ids = {
      job: job.body.id,
      endpoint: ep.body.id,
      team: a.team.id,
      tenant: a.tenant.id,
      key: key.id,
      user: user.id,
      schedule: schedule.body.id,
      plannerRun: plannerRun.body.id,
      bareMetalLease: lease.body.id,
      reservation: reservation.body.id,
    };
  });
  afterAll(async () => sys?.close());

  /** Which of A's objects a path's parameter names, by the path's resource. */
  const TENANT_DATA: [RegExp, keyof typeof ids][] = [
    [/^\/v1\/jobs\/\{id\}/, 'job'],
    [/^\/v1\/endpoints\/\{id\}/, 'endpoint'],
    [/^\/v1\/teams\/\{id\}/, 'team'],
    [/^\/v1\/tenants\/\{(id|tenantId)\}/, 'tenant'],
    [/^\/v1\/api-keys\/\{id\}/, 'key'],
    [/^\/v1\/schedules\/\{id\}/, 'schedule'],
    [/^\/v1\/planner\/runs\/\{id\}/, 'plannerRun'],
    [/^\/v1\/bare-metal\/leases\/\{id\}/, 'bareMetalLease'],
    [/^\/v1\/reservations\/\{id\}/, 'reservation'],
  ];
  /** Shared hardware and the simulator: not tenant data (reads filter other tenants' job ids). */
  const CLUSTER_WIDE = [/^\/v1\/nodes\//, /^\/v1\/gpus\//, /^\/v1\/incidents\//];
  /** Valid bodies, so that a 404 is not hidden behind a 400. */
  const BODIES: Record<string, object> = {
    'post /v1/tenants/{tenantId}/teams': { name: 'intruder', slug: 'intruder' },
    'put /v1/teams/{id}/quotas': { quotas: [{ gpuModel: '*', guaranteed: 1, limit: 1 }] },
    'put /v1/tenants/{id}/quota': { gpuTotal: 1 },
    'patch /v1/endpoints/{id}': { maxReplicas: 2 },
    'post /v1/endpoints/{id}/scale': { replicas: 1 },
    'post /v1/endpoints/{id}/invoke': { input: 'hello' },
    'post /v1/teams/{id}/schedules': { action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin' },
    'patch /v1/reservations/{id}': { name: 'intruder' },
  };
  /** Streams (SSE) are checked by their own specs. */
  const SKIP_LISTS = new Set(['/v1/events/stream']);

  it('answers 404 on every route that names one of A’s objects, for every method', async () => {
    const doc = (await sys.http().get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const walked: string[] = [];
    const failures: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.includes('{')) continue;
      if (CLUSTER_WIDE.some((r) => r.test(path))) continue;
      const match = TENANT_DATA.find(([r]) => r.test(path));
      if (!match) {
        failures.push(`${path}: unknown resource, add it to TENANT_DATA or CLUSTER_WIDE`);
        continue;
      }
      const url = path.replace(/\{[^}]+\}/, ids[match[1]]!);
      for (const method of Object.keys(ops)) {
        const req = (sys.http() as unknown as Record<string, (u: string) => import('supertest').Test>)[method]!(url).set('Authorization', b);
        const res = await req.send(BODIES[`${method} ${path}`] ?? {});
        walked.push(`${method.toUpperCase()} ${path}`);
        if (res.status !== 404) failures.push(`${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        for (const [what, id] of Object.entries(ids)) {
          if (what !== match[1] && JSON.stringify(res.body ?? {}).includes(id)) failures.push(`${method.toUpperCase()} ${path}: leaks A's ${what}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(walked.length).toBeGreaterThanOrEqual(15);
    // Nothing changed on A's side.
    expect((await sys.db.job.findUniqueOrThrow({ where: { id: ids.job } })).state).not.toBe('cancelled');
    expect((await sys.db.apiKey.findUniqueOrThrow({ where: { id: ids.key } })).revokedAt).toBeNull();
    expect((await sys.db.plannerRun.findUniqueOrThrow({ where: { id: ids.plannerRun } })).cancelRequested).toBe(false);
    expect(await sys.db.quota.findFirst({ where: { teamId: ids.team, limit: 1 } })).toBeNull();
    expect(await sys.db.suspendSchedule.count({ where: { id: ids.schedule } })).toBe(1);
    expect(await sys.db.suspendSchedule.count({ where: { teamId: ids.team } })).toBe(1);
    expect((await sys.db.bareMetalLease.findUniqueOrThrow({ where: { id: ids.bareMetalLease } })).state).not.toBe('releasing');
    expect(await sys.db.reservation.count({ where: { id: ids.reservation } })).toBe(1);
    expect((await sys.db.reservation.findUniqueOrThrow({ where: { id: ids.reservation } })).name).not.toBe('intruder');
  });

  it('never lists A’s objects on any list route', async () => {
    const doc = (await sys.http().get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const failures: string[] = [];
    let lists = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (path.includes('{') || !('get' in ops) || SKIP_LISTS.has(path)) continue;
      const res = await sys
        .http()
        .get(`${path}${path.startsWith('/v1/') ? '?limit=500' : ''}`)
        .set('Authorization', b);
      lists++;
      const text = JSON.stringify(res.body ?? {});
      for (const [what, id] of Object.entries(ids)) if (text.includes(id)) failures.push(`GET ${path}: shows A's ${what}`);
    }
    expect(failures).toEqual([]);
    expect(lists).toBeGreaterThanOrEqual(10);
  });

  it('refuses to act for A through B’s own routes (submit into A’s team, key or user in A’s team: 404)', async () => {
    const job = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', b)
      .send({ teamId: ids.team, name: 'x', kind: 'batch', resources: { gpus: 1 } });
    const key = await sys
      .http()
      .post('/v1/api-keys')
      .set('Authorization', b)
      .send({ name: 'x', teamId: ids.team, scopes: ['jobs:read'], role: 'member' });
    const user = await sys
      .http()
      .post('/v1/users')
      .set('Authorization', b)
      .send({ email: 'x@walk.example', name: 'x', password: 'sable-orchard-31-wrens', role: 'member', teamId: ids.team });
    const ep = await sys
      .http()
      .post('/v1/endpoints')
      .set('Authorization', b)
      .send({ teamId: ids.team, name: 'x', model: 'm', resources: { gpus: 1 } });
    expect([job.status, key.status, user.status, ep.status]).toEqual([404, 404, 404, 404]);
  });
});
