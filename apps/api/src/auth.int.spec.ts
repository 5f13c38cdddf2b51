import { createApiKey, createUser } from '@gantry/db';
import { hashPassword } from './modules/users/password';
import { BOOTSTRAP_ADMIN_KEY, makeTenant, startSystem, type TestSystem } from './test-support/system';

const ADMIN = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
const PASSWORD = 'violet-harbour-42-kites';

/** Users and console sessions (argon2id, httpOnly cookie, CSRF), key revocation, rate limits, audit. */
describe('users, sessions, keys, rate limits and audit (real Postgres and Redis)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let tenantAdmin: string;

  beforeAll(async () => {
    // Own Redis prefix: the per-key counters of this suite's tight limit are not shared with other suites.
    // The test client stands in for the console's server: a trusted proxy whose X-Forwarded-For is believed.
    sys = await startSystem({
      GANTRY_RATE_LIMIT_PER_MINUTE: '40',
      GANTRY_TRUSTED_PROXIES: '127.0.0.1,::1',
      GANTRY_QUEUE_PREFIX: `${process.env.GANTRY_QUEUE_PREFIX ?? 'gantry'}-auth`,
    });
    t = await makeTenant(sys.db, 'auth-int');
    tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'tenant admin', role: 'tenant_admin', tenantId: t.tenant.id, scopes: ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write'] })).key}`;
    await sys.db.user.update({
      where: {
        id: (await createUser(sys.db, { email: 'ada@auth-int.example', name: 'Ada', role: 'team_admin', tenantId: t.tenant.id, teamId: t.team.id })).id,
      },
      data: { passwordHash: await hashPassword(PASSWORD) },
    });
  });
  afterAll(async () => sys?.close());

  const login = (email: string, password: string) => sys.http().post('/v1/auth/login').send({ email, password });
  const cookiesOf = (res: { headers: Record<string, unknown> }) => (res.headers['set-cookie'] as string[]).map((c) => c.split(';')[0]!).join('; ');

  describe('sessions', () => {
    it('signs in with email and password: httpOnly SameSite session cookie, CSRF token, GET /v1/me', async () => {
      const res = await login('ADA@auth-int.example', PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.user).toMatchObject({ email: 'ada@auth-int.example', role: 'team-admin', teamId: t.team.id });
      const setCookies = res.headers['set-cookie'] as unknown as string[];
      const session = setCookies.find((c) => c.startsWith('gantry_session='))!;
      expect(session).toMatch(/HttpOnly/);
      expect(session).toMatch(/SameSite=Lax/);
      expect(setCookies.find((c) => c.startsWith('gantry_csrf='))).toMatch(/SameSite=Strict/);
      expect(JSON.stringify(res.body)).not.toContain(session.split(';')[0]!.split('=')[1]!);
      const me = await sys.http().get('/v1/me').set('Cookie', cookiesOf(res));
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ kind: 'session', role: 'team-admin', email: 'ada@auth-int.example', teamId: t.team.id });
      expect(me.body.teams.map((x: { id: string }) => x.id)).toEqual([t.team.id]);
    });

    it.each([
      ['a wrong password', 'ada@auth-int.example', 'not-the-password-at-all'],
      ['an unknown email', 'nobody@auth-int.example', PASSWORD],
    ])('answers 401 for %s, with the same message', async (_n, email, password) => {
      const res = await login(email, password);
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe('invalid email or password');
    });

    it('requires the CSRF token for changes made with the cookie (403 without, 2xx with)', async () => {
      const res = await login('ada@auth-int.example', PASSWORD);
      const cookie = cookiesOf(res);
      const body = { teamId: t.team.id, name: 'from-console', kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 1 } };
      const without = await sys.http().post('/v1/jobs').set('Cookie', cookie).send(body);
      expect(without.status).toBe(403);
      expect(without.body.error.message).toContain('X-CSRF-Token');
      const wrong = await sys.http().post('/v1/jobs').set('Cookie', cookie).set('X-CSRF-Token', 'forged').send(body);
      expect(wrong.status).toBe(403);
      const ok = await sys.http().post('/v1/jobs').set('Cookie', cookie).set('X-CSRF-Token', res.body.csrfToken).send(body);
      expect(ok.status).toBe(201);
      // Reads need no token.
      expect((await sys.http().get('/v1/jobs').set('Cookie', cookie)).status).toBe(200);
    });

    it('ends the session on logout: the cookie is refused at once', async () => {
      const res = await login('ada@auth-int.example', PASSWORD);
      const cookie = cookiesOf(res);
      const out = await sys.http().post('/v1/auth/logout').set('Cookie', cookie).set('X-CSRF-Token', res.body.csrfToken);
      expect(out.status).toBe(204);
      expect((out.headers['set-cookie'] as unknown as string[]).join()).toContain('Max-Age=0');
      const after = await sys.http().get('/v1/me').set('Cookie', cookie);
      expect(after.status).toBe(401);
    });
  });

  describe('users', () => {
    it('lets a tenant admin create a user who can then sign in (argon2id hash stored, never the password)', async () => {
      const res = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', tenantAdmin)
        .send({ email: 'Grace@auth-int.example', name: 'Grace', password: 'lilac-comet-77-ferries', role: 'member', teamId: t.team.id });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ email: 'grace@auth-int.example', role: 'member', teamId: t.team.id });
      const row = await sys.db.user.findFirstOrThrow({ where: { email: 'grace@auth-int.example', tenantId: t.tenant.id } });
      expect(row.passwordHash).toMatch(/^\$argon2id\$/);
      expect((await login('grace@auth-int.example', 'lilac-comet-77-ferries')).status).toBe(200);
      const list = await sys.http().get('/v1/users').set('Authorization', tenantAdmin);
      expect(list.body.items.map((u: { email: string }) => u.email)).toEqual(expect.arrayContaining(['grace@auth-int.example', 'ada@auth-int.example']));
      const dup = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', tenantAdmin)
        .send({ email: 'grace@auth-int.example', name: 'Grace 2', password: 'lilac-comet-77-ferries', role: 'member', teamId: t.team.id });
      expect(dup.status).toBe(409);
    });

    it.each([
      ['too short', 'short-1', 'password_length'],
      ['well known', 'password1234', 'password_common'],
      ['repetitive', 'abababababababab', 'password_repetitive'],
      ['containing the email', 'xx-weakling-2024-yy', 'password_contains_email'],
    ])('refuses a weak password (%s) with 400 naming the rule', async (_n, password, wantRule) => {
      const res = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', tenantAdmin)
        .send({ email: 'weakling@auth-int.example', name: 'Weak', password, role: 'viewer', teamId: t.team.id });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(`rule ${wantRule}`);
    });

    it('refuses roles stronger than the caller, and users to members (403)', async () => {
      const teamAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'ta', role: 'team_admin', tenantId: t.tenant.id, teamId: t.team.id, scopes: ['jobs:read'] })).key}`;
      const res = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', teamAdmin)
        .send({ email: 'boss@auth-int.example', name: 'Boss', password: 'granite-meadow-19-owls', role: 'tenant-admin' });
      expect(res.status).toBe(403);
      const member = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', t.auth)
        .send({ email: 'm2@auth-int.example', name: 'M', password: 'granite-meadow-19-owls', role: 'viewer', teamId: t.team.id });
      expect(member.status).toBe(403);
    });

    it('lets a viewer session read but never write (403)', async () => {
      await sys
        .http()
        .post('/v1/users')
        .set('Authorization', tenantAdmin)
        .send({ email: 'vic@auth-int.example', name: 'Vic', password: 'amber-lantern-58-geese', role: 'viewer', teamId: t.team.id });
      const res = await login('vic@auth-int.example', 'amber-lantern-58-geese');
      const cookie = cookiesOf(res);
      expect((await sys.http().get('/v1/jobs').set('Cookie', cookie)).status).toBe(200);
      const write = await sys
        .http()
        .post('/v1/jobs')
        .set('Cookie', cookie)
        .set('X-CSRF-Token', res.body.csrfToken)
        .send({ teamId: t.team.id, name: 'nope', kind: 'batch', resources: { gpus: 1 } });
      expect(write.status).toBe(403);
    });
  });

  describe('API keys', () => {
    it('refuses a revoked key at once and an expired key (401)', async () => {
      const made = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', tenantAdmin)
        .send({ name: 'short-lived', scopes: ['jobs:read'], teamId: t.team.id, role: 'member' });
      expect(made.status).toBe(201);
      const auth = `Bearer ${made.body.key}`;
      expect((await sys.http().get('/v1/jobs').set('Authorization', auth)).status).toBe(200);
      const list = await sys.http().get('/v1/api-keys').set('Authorization', tenantAdmin);
      const listed = list.body.items.find((k: { id: string }) => k.id === made.body.id);
      expect(listed).toMatchObject({ name: 'short-lived', prefix: made.body.prefix, scopes: ['jobs:read'], revokedAt: null });
      expect(JSON.stringify(list.body)).not.toContain(made.body.key);
      expect(await sys.db.apiKey.count({ where: { hash: made.body.key } })).toBe(0);
      expect((await sys.http().delete(`/v1/api-keys/${made.body.id}`).set('Authorization', tenantAdmin)).status).toBe(204);
      const revoked = await sys.http().get('/v1/jobs').set('Authorization', auth);
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.message).toContain('revoked');

      const expiring = await createApiKey(sys.db, {
        name: 'expired',
        role: 'member',
        tenantId: t.tenant.id,
        teamId: t.team.id,
        scopes: ['jobs:read'],
        expiresAt: new Date(Date.now() - 1000),
      });
      const expired = await sys.http().get('/v1/jobs').set('Authorization', `Bearer ${expiring.key}`);
      expect(expired.status).toBe(401);
      expect(expired.body.error.message).toContain('expired');
    });
  });

  describe('audit', () => {
    it('records every change with actor, key or session, source address and what changed (secrets redacted)', async () => {
      const put = await sys
        .http()
        .put(`/v1/teams/${t.team.id}/quotas`)
        .set('Authorization', tenantAdmin)
        .set('X-Forwarded-For', '203.0.113.9')
        .send({ quotas: [{ gpuModel: '*', guaranteed: 32, limit: 64 }] });
      expect(put.status).toBe(200);
      const res = await sys.http().get('/v1/audit?limit=100').set('Authorization', tenantAdmin);
      expect(res.status).toBe(200);
      const entry = res.body.items.find((e: { action: string }) => e.action === 'PUT /v1/teams/:id/quotas');
      expect(entry).toMatchObject({ actor: 'tenant admin', target: t.team.id, source: '203.0.113.9', tenantId: t.tenant.id });
      expect(entry.apiKeyId).toBeTruthy();
      expect(entry.data.request).toEqual({ quotas: [{ gpuModel: '*', guaranteed: 32, limit: 64 }] });
      const signIn = res.body.items.find((e: { action: string; actor: string }) => e.action === 'POST /v1/auth/login' && e.actor.startsWith('Ada'));
      expect(signIn).toMatchObject({ actor: 'Ada <ada@auth-int.example>', apiKeyId: null });
      expect(signIn.data.request.password).toBe('[redacted]');
      const userMade = res.body.items.find((e: { action: string }) => e.action === 'POST /v1/users');
      expect(userMade.data.request.password).toBe('[redacted]');
      const sessionChange = res.body.items.find((e: { action: string; data: { via: string } }) => e.action === 'POST /v1/jobs' && e.data.via === 'session');
      expect(sessionChange.userId).toBeTruthy();
      expect(sessionChange.data.sessionId).toBeTruthy();
      // Members do not read the audit log; other tenants never see these rows.
      expect((await sys.http().get('/v1/audit').set('Authorization', t.auth)).status).toBe(403);
      const other = await makeTenant(sys.db, 'auth-int-other', { role: 'tenant_admin' });
      const theirs = await sys.http().get('/v1/audit?limit=500').set('Authorization', other.auth);
      expect(theirs.body.items.filter((e: { tenantId: string }) => e.tenantId === t.tenant.id)).toEqual([]);
      expect((await sys.http().get('/v1/audit?limit=500').set('Authorization', ADMIN)).body.items.length).toBeGreaterThan(3);
    });
  });

  describe('rate limits', () => {
    it('answers 429 with Retry-After once a key passes its per-minute limit; other keys are unaffected', async () => {
      const k = `Bearer ${(await createApiKey(sys.db, { name: 'burst', role: 'member', tenantId: t.tenant.id, teamId: t.team.id, scopes: ['jobs:read'] })).key}`;
      const codes: number[] = [];
      let limited: { headers: Record<string, string>; body: { error: { code: string } } } | undefined;
      for (let i = 0; i < 45; i++) {
        const r = await sys.http().get('/v1/me').set('Authorization', k);
        codes.push(r.status);
        if (r.status === 429 && !limited) limited = r as never;
      }
      expect(codes.filter((c) => c === 200).length).toBeLessThanOrEqual(40);
      expect(limited).toBeDefined();
      expect(limited!.body.error.code).toBe('rate_limited');
      const retry = Number(limited!.headers['retry-after']);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect((await sys.http().get('/v1/me').set('Authorization', tenantAdmin)).status).toBe(200);
    });
  });
});
