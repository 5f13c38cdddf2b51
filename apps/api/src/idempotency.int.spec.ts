import { BOOTSTRAP_ADMIN_KEY, startSystem, type TestSystem } from './test-support/system';

/** `Idempotency-Key` on creating POSTs: a retry returns the first answer, never a second resource. */
describe('Idempotency-Key on creating POSTs (real Redis and Postgres)', () => {
  let sys: TestSystem;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => sys?.close());

  const createTenant = (body: object, key?: string) => {
    const r = sys.http().post('/v1/tenants').set('Authorization', admin);
    return (key ? r.set('Idempotency-Key', key) : r).send(body);
  };

  it('answers a retried tenant creation with the first tenant (201 then 200), creating one', async () => {
    const first = await createTenant({ name: 'Idem Co', slug: 'idem-co' }, 'tenant-1');
    const again = await createTenant({ name: 'Idem Co', slug: 'idem-co' }, 'tenant-1');
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await sys.db.tenant.count({ where: { slug: 'idem-co' } })).toBe(1);
  });

  it('refuses the same key with a different body (409), and a malformed key (400)', async () => {
    await createTenant({ name: 'Other', slug: 'idem-other' }, 'tenant-2');
    const reused = await createTenant({ name: 'Other 2', slug: 'idem-other-2' }, 'tenant-2');
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('conflict');
    expect(await sys.db.tenant.count({ where: { slug: 'idem-other-2' } })).toBe(0);
    const bad = await createTenant({ name: 'X', slug: 'idem-x' }, 'has space');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('Idempotency-Key');
  });

  it('lets a retry run again when the first attempt failed', async () => {
    const failed = await createTenant({ name: '', slug: 'idem-retry' }, 'tenant-3');
    expect(failed.status).toBe(400);
    // The failed attempt created nothing and holds nothing: the corrected retry runs.
    const ok = await createTenant({ name: 'Retry', slug: 'idem-retry' }, 'tenant-3');
    expect(ok.status).toBe(201);
    const again = await createTenant({ name: 'Retry', slug: 'idem-retry' }, 'tenant-3');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(ok.body.id);
  });

  it('answers a retried team creation with the first team', async () => {
    const tenant = (await createTenant({ name: 'Keys', slug: 'idem-keys' })).body;
    const a = await sys.http().post(`/v1/tenants/${tenant.id}/teams`).set('Authorization', admin).set('Idempotency-Key', 'team-1').send({ name: 'A', slug: 'team-a' });
    const b = await sys.http().post(`/v1/tenants/${tenant.id}/teams`).set('Authorization', admin).set('Idempotency-Key', 'team-1').send({ name: 'A', slug: 'team-a' });
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(await sys.db.team.count({ where: { tenantId: tenant.id } })).toBe(1);
  });
});
