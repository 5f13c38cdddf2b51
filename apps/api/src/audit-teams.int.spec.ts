import { createApiKey, createTeam } from '@gantry/db';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

type Entry = { action: string; teamId: string | null; target: string | null; targetName: string | null; outcome: string; data: Record<string, unknown> };

/** The audit log as a team admin reads it: its team's changes, by name, refused attempts included. */
describe('audit for team admins (real Postgres and Redis)', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => sys?.close());

  it("a team admin sees its team's changes and refusals, targets by name; not another team's; members see none", async () => {
    const t = await makeTenant(sys.db, 'audit-teams', { quota: { guaranteed: 8, limit: 16 } });
    const other = await createTeam(sys.db, t.tenant.id, { name: 'Vision', slug: 'vision', quota: { guaranteed: 8, limit: 16 } });
    const bearer = async (role: 'tenant_admin' | 'team_admin', teamId?: string) =>
      `Bearer ${(await createApiKey(sys.db, { name: role, role, tenantId: t.tenant.id, teamId, scopes: ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write'] })).key}`;
    const tenantAdmin = await bearer('tenant_admin');
    const teamAdmin = await bearer('team_admin', t.team.id);
    const http = () => sys.http();

    const quotas = { quotas: [{ gpuModel: '*', guaranteed: 4, limit: 16 }] };
    expect((await http().put(`/v1/teams/${t.team.id}/quotas`).set('Authorization', tenantAdmin).send(quotas)).status).toBe(200);
    expect((await http().put(`/v1/teams/${other.id}/quotas`).set('Authorization', tenantAdmin).send(quotas)).status).toBe(200);
    const job = await http()
      .post('/v1/jobs')
      .set('Authorization', t.auth)
      .send({
        teamId: t.team.id,
        name: 'audited-train',
        kind: 'training',
        resources: { gpus: 1, gpuModel: 'A100-80GB' },
        simulation: { durationSeconds: 600 },
      });
    expect(job.status).toBe(201);
    expect((await http().post(`/v1/jobs/${job.body.id}/cancel`).set('Authorization', t.auth)).status).toBe(200);
    const again = await http().post(`/v1/jobs/${job.body.id}/cancel`).set('Authorization', t.auth);
    expect(again.status).toBe(409);

    const seen = await eventually(async () => {
      const r = await http().get('/v1/audit?limit=100').set('Authorization', teamAdmin);
      expect(r.status).toBe(200);
      const items = r.body.items as Entry[];
      return items.some((e) => e.outcome === 'refused') ? items : undefined;
    });
    expect(seen.every((e) => e.teamId === t.team.id)).toBe(true);
    expect(seen.find((e) => e.action === 'PUT /v1/teams/:id/quotas')).toMatchObject({ target: t.team.id, targetName: `team ${t.team.name}`, outcome: 'done' });
    expect(seen.filter((e) => e.target === other.id)).toEqual([]);
    expect(seen.find((e) => e.action === 'POST /v1/jobs')).toMatchObject({ targetName: 'job audited-train' });
    const refused = seen.find((e) => e.outcome === 'refused')!;
    expect(refused).toMatchObject({ action: 'POST /v1/jobs/:id/cancel', target: job.body.id, targetName: 'job audited-train' });
    expect(refused.data).toMatchObject({ status: 409, error: { code: expect.any(String), message: expect.stringContaining('cancel') } });

    const onlyRefused = (await http().get('/v1/audit?outcome=refused').set('Authorization', teamAdmin)).body.items as Entry[];
    expect(onlyRefused.map((e) => e.outcome)).toEqual(['refused']);
    // The tenant admin reads both teams; a member reads none.
    const all = (await http().get('/v1/audit?limit=100').set('Authorization', tenantAdmin)).body.items as Entry[];
    expect(all.some((e) => e.target === other.id)).toBe(true);
    expect((await http().get('/v1/audit').set('Authorization', t.auth)).status).toBe(403);
  }, 300_000);
});
