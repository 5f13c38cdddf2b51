import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { createApiKey } from '@gantry/db';
import { parseConfig } from './config/config';
import { HttpModule } from './app.module';
import { configureHttp } from './http';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * The API caches key and team lookups per process (common/change-epoch.service.ts). With two API
 * processes on one database and Redis, a change made through one is seen by the other on its
 * very next request: no waiting, no stale answer.
 */
describe('lookup caches stay correct across API processes (real Postgres and Redis)', () => {
  let sys: TestSystem;
  let other: INestApplication;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let tenantAdmin: string;
  const one = () => sys.http();
  const two = () => request(other.getHttpServer());

  beforeAll(async () => {
    sys = await startSystem();
    const config = parseConfig({
      ...process.env,
      DATABASE_URL: sys.config.databaseUrl,
      GANTRY_QUEUE_PREFIX: sys.config.queuePrefix,
      GANTRY_BOOTSTRAP_ADMIN_KEY: BOOTSTRAP_ADMIN_KEY,
      GANTRY_LOG_LEVEL: 'warn',
    });
    other = await NestFactory.create(HttpModule.forRoot(config), { bodyParser: false, logger: ['error'], forceCloseConnections: true });
    configureHttp(other);
    await other.init();
    t = await makeTenant(sys.db, 'caches-int', { quota: { guaranteed: 8, limit: 8 } });
    tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'tenant admin', role: 'tenant_admin', tenantId: t.tenant.id, scopes: ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write'] })).key}`;
    await eventually(async () => (await sys.db.gpu.count()) > 0);
  });
  afterAll(async () => {
    await other?.close();
    await sys?.close();
  });

  const submit = (http: () => ReturnType<typeof request>, gpus: number, replicas = 1) =>
    http()
      .post('/v1/jobs')
      .set('Authorization', t.auth)
      .send({
        teamId: t.team.id,
        name: `caches-${gpus}`,
        kind: 'training',
        preemptible: true,
        replicas,
        resources: { gpus },
        simulation: { durationSeconds: 1 },
      });

  it('a key revoked through one API process is refused by the other on its next request', async () => {
    const member = await createApiKey(sys.db, { name: 'member', role: 'member', tenantId: t.tenant.id, teamId: t.team.id, scopes: ['jobs:read'] });
    const auth = `Bearer ${member.key}`;
    // Both processes have the key in their caches.
    for (const http of [one, two]) expect((await http().get('/v1/jobs').set('Authorization', auth)).status).toBe(200);
    expect((await one().delete(`/v1/api-keys/${member.id}`).set('Authorization', tenantAdmin)).status).toBe(204);
    const refused = await two().get('/v1/jobs').set('Authorization', auth);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/revoked/);
  });

  it('a quota lowered through one API process bounds submissions on the other at once, and raised again, frees them', async () => {
    // 4 GPUs fit the team's limit of 8 on both processes (and fill their caches).
    expect((await submit(one, 4)).status).toBe(201);
    expect((await submit(two, 4)).status).toBe(201);
    const lower = await one()
      .put(`/v1/teams/${t.team.id}/quotas`)
      .set('Authorization', tenantAdmin)
      .send({ quotas: [{ gpuModel: '*', guaranteed: 1, limit: 2 }] });
    expect(lower.status).toBe(200);
    const refused = await submit(two, 4);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('quota_exceeded');
    expect(refused.body.error.message).toMatch(/limit for all GPU models is 2/);
    const raise = await two()
      .put(`/v1/teams/${t.team.id}/quotas`)
      .set('Authorization', tenantAdmin)
      .send({ quotas: [{ gpuModel: '*', guaranteed: 8, limit: 16 }] });
    expect(raise.status).toBe(200);
    expect((await submit(one, 8, 2)).status).toBe(201);
  });

  it('a tenant total lowered by the platform admin bounds submissions on the other process at once', async () => {
    const lower = await one().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', `Bearer ${BOOTSTRAP_ADMIN_KEY}`).send({ gpuTotal: 8 });
    expect(lower.status).toBe(200);
    const refused = await submit(two, 8, 2);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/tenant's GPU total is 8/);
  });
});
