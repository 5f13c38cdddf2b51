import { createApiKey } from '@gantry/db';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

type Entry = { action: string; target: string | null; outcome: string; changes: Record<string, { from: unknown; to: unknown }> | null };

/** Audited updates record what they moved, old and new value per field, in the entry and its CSV export. */
describe('audit before → after (real Postgres and Redis)', () => {
  let sys: TestSystem;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem();
    await eventually(async () => (await sys.db.node.count()) > 0);
  });
  afterAll(async () => sys?.close());

  it('quota, endpoint, node and key changes carry their fields before and after; no secret; another tenant sees none', async () => {
    const t = await makeTenant(sys.db, 'audit-changes', { quota: { guaranteed: 4, limit: 8 } });
    const other = await makeTenant(sys.db, 'audit-changes-other');
    const keyOf = async (tenantId: string, role: 'tenant_admin' | 'member' = 'tenant_admin') =>
      `Bearer ${(await createApiKey(sys.db, { name: role, role, tenantId, scopes: ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write', 'endpoints:read', 'endpoints:write'] })).key}`;
    const tenantAdmin = await keyOf(t.tenant.id);
    const otherAdmin = await keyOf(other.tenant.id);
    const http = () => sys.http();

    const put = await http()
      .put(`/v1/teams/${t.team.id}/quotas`)
      .set('Authorization', tenantAdmin)
      .send({ quotas: [{ gpuModel: '*', guaranteed: 4, limit: 16 }] });
    expect(put.status).toBe(200);

    const ep = await http()
      .post('/v1/endpoints')
      .set('Authorization', tenantAdmin)
      .send({ teamId: t.team.id, name: 'chat', model: 'llama-3-8b', resources: { gpus: 1, gpuModel: 'A100-80GB' }, maxReplicas: 2 });
    expect(ep.status).toBe(201);
    expect((await http().patch(`/v1/endpoints/${ep.body.id}`).set('Authorization', tenantAdmin).send({ maxReplicas: 4 })).status).toBe(200);

    const node = (await sys.db.node.findFirstOrThrow({ where: { state: 'ready' }, orderBy: { name: 'asc' } })).id;
    expect((await http().post(`/v1/nodes/${node}/cordon`).set('Authorization', admin).send({ reason: 'fan' })).status).toBe(200);
    expect((await http().post(`/v1/nodes/${node}/uncordon`).set('Authorization', admin).send({})).status).toBe(200);

    const made = await http()
      .post('/v1/api-keys')
      .set('Authorization', tenantAdmin)
      .send({ name: 'ci', role: 'member', scopes: ['jobs:read'] });
    expect(made.status).toBe(201);
    expect((await http().delete(`/v1/api-keys/${made.body.id}`).set('Authorization', tenantAdmin)).status).toBe(204);
    // a refused update moved nothing and records no change
    expect(
      (
        await http()
          .put(`/v1/teams/${t.team.id}/quotas`)
          .set('Authorization', otherAdmin)
          .send({ quotas: [{ gpuModel: '*', guaranteed: 1, limit: 1 }] })
      ).status,
    ).toBeGreaterThanOrEqual(400);

    const items = (await http().get('/v1/audit?limit=100').set('Authorization', tenantAdmin)).body.items as Entry[];
    const find = (action: string) => items.find((e) => e.action === action && e.outcome === 'done');
    // a tenant admin's edit also sets the ceilings a team admin may raise to
    expect(find('PUT /v1/teams/:id/quotas')?.changes).toEqual({
      limit: { from: 8, to: 16 },
      maxGuaranteed: { from: null, to: 4 },
      maxLimit: { from: null, to: 16 },
    });
    expect(find('PATCH /v1/endpoints/:id')?.changes).toEqual({ maxReplicas: { from: 2, to: 4 } });
    expect(find('DELETE /v1/api-keys/:id')?.changes).toEqual({ revokedAt: { from: null, to: expect.any(String) } });
    expect(JSON.stringify(items)).not.toContain(made.body.key);
    // a create is not an update: nothing before to compare with
    expect(find('POST /v1/endpoints')?.changes).toBeNull();

    const platform = (await http().get('/v1/audit?limit=100&action=nodes').set('Authorization', admin)).body.items as Entry[];
    const cordon = platform.find((e) => e.action === 'POST /v1/nodes/:id/cordon' && e.target === node);
    expect(cordon?.changes).toMatchObject({ state: { from: 'ready', to: 'cordoned' }, stateReason: { from: null, to: expect.stringContaining('fan') } });
    expect(platform.find((e) => e.action === 'POST /v1/nodes/:id/uncordon' && e.target === node)?.changes).toMatchObject({
      state: { from: 'cordoned', to: 'ready' },
    });

    const csv = await http().get('/v1/audit?format=csv&action=quotas').set('Authorization', tenantAdmin);
    expect(csv.status).toBe(200);
    const [header, ...lines] = csv.text.trim().split('\n');
    expect(header).toContain('target_name,changes,data');
    expect(lines.some((l) => l.includes('limit 8 → 16'))).toBe(true);

    // tenant scope unchanged: the other tenant's admin reads none of these entries (its refusal is its own)
    const theirs = (await http().get('/v1/audit?limit=100').set('Authorization', otherAdmin)).body.items as Entry[];
    expect(theirs.filter((e) => e.changes !== null)).toEqual([]);
  }, 300_000);
});
