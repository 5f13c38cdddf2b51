import { createHash, randomUUID } from 'node:crypto';
import { IdempotencyRepository } from './common/idempotency.repository';
import { STALE_PENDING_MS } from './common/idempotency.interceptor';
import { RedisService } from './common/redis.service';
import { BOOTSTRAP_ADMIN_KEY, startSystem, type TestSystem } from './test-support/system';

/**
 * `Idempotency-Key` on creating POSTs: a retry returns the first answer, never a second resource.
 * The records live in Postgres (IdempotencyRecord): a Redis loss loses none.
 */
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
    const a = await sys
      .http()
      .post(`/v1/tenants/${tenant.id}/teams`)
      .set('Authorization', admin)
      .set('Idempotency-Key', 'team-1')
      .send({ name: 'A', slug: 'team-a' });
    const b = await sys
      .http()
      .post(`/v1/tenants/${tenant.id}/teams`)
      .set('Authorization', admin)
      .set('Idempotency-Key', 'team-1')
      .send({ name: 'A', slug: 'team-a' });
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(await sys.db.team.count({ where: { tenantId: tenant.id } })).toBe(1);
  });
  const hashOf = (body: object) => createHash('sha256').update(JSON.stringify(body)).digest('hex');
  /** The scope (caller:method:path) of the admin's tenant creations, from a record they left. */
  const tenantScope = async () => {
    await createTenant({ name: 'Scope', slug: 'idem-scope' }, 'scope-probe');
    return (await sys.db.idempotencyRecord.findFirstOrThrow({ where: { key: 'scope-probe' } })).scope;
  };
  const record = (scope: string, key: string, r: { bodyHash?: string; state?: string; createdAt: Date; expiresAt: Date; status?: number; body?: object }) =>
    sys.db.idempotencyRecord.create({
      data: {
        id: randomUUID(),
        scope,
        key,
        bodyHash: r.bodyHash ?? 'x',
        state: r.state ?? 'done',
        status: r.status,
        body: r.body,
        createdAt: r.createdAt,
        expiresAt: r.expiresAt,
      },
    });

  it("keeps the record across a Redis loss: the retry after a wipe of the system's keys answers the first tenant", async () => {
    const body = { name: 'Survivor', slug: 'idem-survivor' };
    const first = await createTenant(body, 'redis-loss-1');
    expect(first.status).toBe(201);
    // Redis restarted without persistence: every key of the system's prefix is gone.
    const redis = sys.api.get(RedisService).client;
    const keys = await redis.keys(`${sys.config.queuePrefix}:*`);
    if (keys.length) await redis.del(...keys);
    expect(await redis.keys(`${sys.config.queuePrefix}:*`)).toEqual([]);
    const again = await createTenant(body, 'redis-loss-1');
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text); // the same bytes: json, not jsonb, keeps the key order
    expect(await sys.db.tenant.count({ where: { slug: 'idem-survivor' } })).toBe(1);
    const stored = await sys.db.idempotencyRecord.findFirstOrThrow({ where: { key: 'redis-loss-1' } });
    expect(stored).toMatchObject({ state: 'done', status: 201, bodyHash: hashOf(body) });
    expect(stored.expiresAt.getTime() - stored.createdAt.getTime()).toBe(24 * 3600_000);
  });

  it('answers 409 while a fresh pending record holds the key, and takes over a stale one', async () => {
    const scope = await tenantScope();
    const body = { name: 'Stale', slug: 'idem-stale' };
    const now = Date.now();
    await record(scope, 'busy-1', { bodyHash: hashOf(body), state: 'pending', createdAt: new Date(now - 5_000), expiresAt: new Date(now + 3600_000) });
    const busy = await createTenant(body, 'busy-1');
    expect(busy.status).toBe(409);
    expect(busy.body.error.message).toMatch(/still in progress/);
    expect(await sys.db.tenant.count({ where: { slug: 'idem-stale' } })).toBe(0);

    // The process that claimed 'stale-1' died mid-request long ago: the key is free again.
    await record(scope, 'stale-1', {
      bodyHash: hashOf(body),
      state: 'pending',
      createdAt: new Date(now - STALE_PENDING_MS - 1_000),
      expiresAt: new Date(now + 3600_000),
    });
    const taken = await createTenant(body, 'stale-1');
    expect(taken.status).toBe(201);
    const again = await createTenant(body, 'stale-1');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(taken.body.id);
    expect(await sys.db.tenant.count({ where: { slug: 'idem-stale' } })).toBe(1);
  });

  it('takes over an expired record with the same key instead of replaying it', async () => {
    const scope = await tenantScope();
    const body = { name: 'Expired', slug: 'idem-expired' };
    const day = 24 * 3600_000;
    await record(scope, 'expired-1', {
      bodyHash: hashOf(body),
      createdAt: new Date(Date.now() - day - 60_000),
      expiresAt: new Date(Date.now() - 60_000),
      status: 201,
      body: { id: 'old' },
    });
    const r = await createTenant(body, 'expired-1');
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe('old');
    expect(await sys.db.tenant.count({ where: { slug: 'idem-expired' } })).toBe(1);
  });

  it('purges expired records when a key is claimed, keeping live ones', async () => {
    const past = new Date(Date.now() - 60_000);
    const old = new Date(Date.now() - 25 * 3600_000);
    for (let i = 0; i < 5; i++) await record('k_gone:POST:/v1/tenants', `old-${i}`, { createdAt: old, expiresAt: past, status: 201, body: { i } });
    await record('k_gone:POST:/v1/tenants', 'live', { createdAt: new Date(), expiresAt: new Date(Date.now() + 3600_000), status: 201, body: {} });
    const r = await createTenant({ name: 'Purge', slug: 'idem-purge' }, 'purge-1');
    expect(r.status).toBe(201);
    expect(await sys.db.idempotencyRecord.count({ where: { expiresAt: { lte: new Date() } } })).toBe(0);
    expect(await sys.db.idempotencyRecord.count({ where: { scope: 'k_gone:POST:/v1/tenants' } })).toBe(1);
  });

  it('lets only the current claim record or release the key (a request that outlived a takeover cannot)', async () => {
    const repo = sys.api.get(IdempotencyRepository);
    const scope = 'k_repo:POST:/v1/tenants';
    const at = (ms: number) => new Date(Date.now() + ms);
    const claim = (now: Date) =>
      repo.claim({
        scope,
        key: 'k',
        bodyHash: 'h',
        now,
        expiresAt: new Date(now.getTime() + 3600_000),
        staleBefore: new Date(now.getTime() - STALE_PENDING_MS),
      });
    const slow = await claim(at(0));
    expect(slow.claimed).toBe(true);
    expect((await claim(at(1_000))).claimed).toBe(false);
    const next = await claim(at(STALE_PENDING_MS + 1_000));
    expect(next.claimed).toBe(true);
    if (!slow.claimed || !next.claimed) throw new Error('unreachable');
    expect(await repo.complete(slow.token, 201, { id: 'slow' })).toBe(false);
    await repo.release(slow.token);
    expect(await repo.complete(next.token, 201, { id: 'next', a: 1 })).toBe(true);
    const seen = await claim(at(STALE_PENDING_MS + 2_000));
    expect(seen).toEqual({ claimed: false, record: { state: 'done', bodyHash: 'h', status: 201, body: { id: 'next', a: 1 } } });
  });

  it('gives exactly one of several concurrent first requests the key', async () => {
    const body = { name: 'Race', slug: 'idem-race' };
    const all = await Promise.all(Array.from({ length: 5 }, () => createTenant(body, 'race-1')));
    const statuses = all.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.every((s) => s === 201 || s === 200 || s === 409)).toBe(true);
    expect(await sys.db.tenant.count({ where: { slug: 'idem-race' } })).toBe(1);
  });
});
