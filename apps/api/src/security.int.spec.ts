import { Logger, type LoggerService } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createApiKey, createUser } from '@gantry/db';
import { HTTP_STATUS } from './common/errors';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

// The module object itself: a spy on it reaches every `import { timingSafeEqual } from 'node:crypto'`.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeCrypto: typeof import('node:crypto') = require('node:crypto');

const ADMIN = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
const TENANT_SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'quotas:write', 'cluster:read'];
const PASSWORD = 'saffron-glacier-64-plovers';
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * Security checks that the other specs do not make. Already covered elsewhere (not repeated here):
 * - auth.int.spec.ts: revoked and expired keys (401 + message), wrong password / unknown email (401,
 *   same message), CSRF required for cookie writes, logout, argon2id for a created user, key and
 *   role escalation on POST /v1/users (team admin -> tenant admin: 403), the per-key 429 with
 *   Retry-After, audit redaction of passwords.
 * - tenancy.int.spec.ts: every route walked with another tenant's key (404, no leak), acting in
 *   another tenant's team through jobs / keys / users / endpoints (404).
 * - idempotency.int.spec.ts: Idempotency-Key replay, reuse and malformed keys.
 * - fuzz.int.spec.ts: malformed input of every kind on every route (no 5xx, the envelope).
 */
describe('security: privileged fields, credentials on every route, secrets at rest and in logs, constant-time comparison', () => {
  let sys: TestSystem;
  let a: Awaited<ReturnType<typeof makeTenant>>;
  let b: Awaited<ReturnType<typeof makeTenant>>;
  let aAdmin: string;
  let aAdminKeyId: string;
  let aTeamAdmin: string;
  let aOtherTeamId: string;
  let jobId: string;
  let endpointId: string;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_RATE_LIMIT_PER_MINUTE: '100000' });
    a = await makeTenant(sys.db, 'sec-a', { quota: { guaranteed: 16, limit: 32 } });
    b = await makeTenant(sys.db, 'sec-b');
    const admin = await createApiKey(sys.db, { name: 'a admin', role: 'tenant_admin', tenantId: a.tenant.id, scopes: TENANT_SCOPES });
    aAdmin = `Bearer ${admin.key}`;
    aAdminKeyId = admin.id;
    aTeamAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'a team admin', role: 'team_admin', tenantId: a.tenant.id, teamId: a.team.id, scopes: TENANT_SCOPES })).key}`;
    aOtherTeamId = (await sys.http().post(`/v1/tenants/${a.tenant.id}/teams`).set('Authorization', ADMIN).send({ name: 'second', slug: 'second' })).body.id;
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
    const job = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', aAdmin)
      .send({ teamId: a.team.id, name: 'sec-job', kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 900 } });
    const ep = await sys
      .http()
      .post('/v1/endpoints')
      .set('Authorization', aAdmin)
      .send({ teamId: a.team.id, name: 'sec-ep', model: 'llama-3-8b', resources: { gpus: 1 } });
    expect([job.status, ep.status, typeof aOtherTeamId]).toEqual([201, 201, 'string']);
    jobId = job.body.id;
    endpointId = ep.body.id;
  }, 60_000);
  afterAll(async () => sys?.close());

  const expectEnvelope = (res: { status: number; body: { error?: { code?: string; message?: string } } }, wantStatus: number) => {
    expect(res.status).toBe(wantStatus);
    expect(typeof res.body.error?.code).toBe('string');
    expect(HTTP_STATUS[res.body.error!.code as keyof typeof HTTP_STATUS]).toBe(wantStatus);
    expect(res.body.error!.message).toEqual(expect.stringMatching(/\S/));
  };

  /** A privileged field is refused (400 naming it) or ignored; either way the stored row keeps its own values. */
  const refusedOrIgnored = (
    res: { status: number; body: { error?: { message: string; details?: { field?: string; problem: string }[] } } },
    field: string,
    okStatus: number,
  ) => {
    if (res.status === okStatus) return 'ignored';
    expect(res.status).toBe(400);
    const text = `${res.body.error!.message} ${JSON.stringify(res.body.error!.details ?? [])}`;
    expect(text).toContain(field);
    return 'refused';
  };

  describe('privileged fields in bodies are never written', () => {
    const forgedId = 'cforgedforgedforgedforged';

    it.each([
      ['tenantId (another tenant)', () => ({ tenantId: b.tenant.id })],
      ['state', () => ({ state: 'running' })],
      ['id', () => ({ id: forgedId })],
      ['version', () => ({ version: 99 })],
      ['createdByKeyId', () => ({ createdByKeyId: 'forged-key' })],
      ['progressSeconds', () => ({ progressSeconds: 1e6 })],
      ['requeueOnSuspend', () => ({ requeueOnSuspend: true })],
      ['reasons', () => ({ reasons: ['approved'] })],
    ])('POST /v1/jobs with %s', async (field, extra) => {
      const name = `sec-extra-${field.split(' ')[0]!.toLowerCase()}`;
      const res = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', aAdmin)
        .send({ teamId: a.team.id, name, kind: 'batch', resources: { gpus: 64 }, replicas: 512, simulation: { durationSeconds: 5 }, ...extra() });
      const outcome = refusedOrIgnored(res, field.split(' ')[0]!, 201);
      const rows = await sys.db.job.findMany({ where: { name } });
      if (outcome === 'refused') expect(rows).toEqual([]);
      for (const row of rows) {
        expect(row).toMatchObject({
          tenantId: a.tenant.id,
          teamId: a.team.id,
          createdByKeyId: aAdminKeyId,
          version: 0,
          progressSeconds: 0,
          requeueOnSuspend: false,
        });
        expect(row.id).not.toBe(forgedId);
      }
      expect(await sys.db.job.count({ where: { OR: [{ id: forgedId }, { tenantId: b.tenant.id }] } })).toBe(0);
    });

    it.each([
      ['tenantId', () => ({ tenantId: b.tenant.id })],
      ['desiredReplicas', () => ({ desiredReplicas: 60 })],
      ['deletedAt', () => ({ deletedAt: '2020-01-01T00:00:00Z' })],
      ['id', () => ({ id: forgedId })],
      ['version', () => ({ version: 42 })],
    ])('POST /v1/endpoints with %s', async (field, extra) => {
      const name = `sec-ep-${field.toLowerCase()}`;
      const res = await sys
        .http()
        .post('/v1/endpoints')
        .set('Authorization', aAdmin)
        .send({ teamId: a.team.id, name, model: 'm', resources: { gpus: 1 }, ...extra() });
      const outcome = refusedOrIgnored(res, field, 201);
      const rows = await sys.db.endpoint.findMany({ where: { name } });
      if (outcome === 'refused') expect(rows).toEqual([]);
      for (const row of rows) expect(row).toMatchObject({ tenantId: a.tenant.id, desiredReplicas: 0, deletedAt: null, version: 0 });
    });

    it.each([
      ['tenantId', () => ({ tenantId: b.tenant.id })],
      ['teamId', () => ({ teamId: b.team.id })],
      ['desiredReplicas', () => ({ desiredReplicas: 60 })],
      ['deletedAt', () => ({ deletedAt: '2020-01-01T00:00:00Z' })],
      ['name', () => ({ name: 'renamed' })],
      ['resources', () => ({ resources: { gpus: 64 } })],
    ])('PATCH /v1/endpoints/:id with %s', async (field, extra) => {
      const before = await sys.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
      const res = await sys
        .http()
        .patch(`/v1/endpoints/${endpointId}`)
        .set('Authorization', aAdmin)
        .send({ maxReplicas: 2, ...extra() });
      refusedOrIgnored(res, field, 200);
      const after = await sys.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
      expect({ tenantId: after.tenantId, teamId: after.teamId, deletedAt: after.deletedAt, name: after.name, resources: after.resources }).toEqual({
        tenantId: before.tenantId,
        teamId: before.teamId,
        deletedAt: null,
        name: before.name,
        resources: before.resources,
      });
      expect(after.desiredReplicas).toBeLessThanOrEqual(2);
    });

    it('POST /v1/tenants/:tenantId/teams with another tenantId in the body: the team is made in the path tenant, or refused', async () => {
      const res = await sys
        .http()
        .post(`/v1/tenants/${a.tenant.id}/teams`)
        .set('Authorization', ADMIN)
        .send({ name: 'x', slug: 'sec-smuggled', tenantId: b.tenant.id });
      refusedOrIgnored(res, 'tenantId', 201);
      expect(await sys.db.team.count({ where: { slug: 'sec-smuggled', tenantId: b.tenant.id } })).toBe(0);
    });

    it.each([
      ['teamId (another tenant)', { teamId: 'B' }],
      ['maxGuaranteed (the tenant admin ceiling)', { maxGuaranteed: 1000 }],
      ['maxLimit (the tenant admin ceiling)', { maxLimit: 1000 }],
      ['id', { id: forgedId }],
    ])('PUT /v1/teams/:id/quotas by a team admin with %s in a quota', async (field, extra) => {
      const before = await sys.db.quota.findMany({ where: { teamId: { in: [a.team.id, b.team.id] } }, orderBy: { id: 'asc' } });
      const item = { gpuModel: '*', guaranteed: 1, limit: 2, ...extra, ...('teamId' in extra ? { teamId: b.team.id } : {}) };
      const res = await sys
        .http()
        .put(`/v1/teams/${a.team.id}/quotas`)
        .set('Authorization', aTeamAdmin)
        .send({ quotas: [item] });
      refusedOrIgnored(res, field.split(' ')[0]!, 200);
      const after = await sys.db.quota.findMany({ where: { teamId: { in: [a.team.id, b.team.id] } }, orderBy: { id: 'asc' } });
      expect(after.filter((q) => q.teamId === b.team.id)).toEqual(before.filter((q) => q.teamId === b.team.id));
      for (const q of after) {
        expect(q.id).not.toBe(forgedId);
        const was = before.find((x) => x.teamId === q.teamId && x.gpuModel === q.gpuModel);
        expect([q.maxGuaranteed?.toString() ?? null, q.maxLimit?.toString() ?? null]).toEqual([
          was?.maxGuaranteed?.toString() ?? null,
          was?.maxLimit?.toString() ?? null,
        ]);
      }
    });

    it('PUT /v1/tenants/:id/quota with another tenantId in the body changes only the path tenant (or is refused)', async () => {
      const bBefore = await sys.db.tenant.findUniqueOrThrow({ where: { id: b.tenant.id } });
      const res = await sys.http().put(`/v1/tenants/${a.tenant.id}/quota`).set('Authorization', aAdmin).send({ gpuTotal: 7, tenantId: b.tenant.id });
      refusedOrIgnored(res, 'tenantId', 200);
      expect((await sys.db.tenant.findUniqueOrThrow({ where: { id: b.tenant.id } })).gpuTotal?.toString()).toBe(bBefore.gpuTotal?.toString());
    });

    it('POST /v1/teams/:id/schedules keeps the path team and the caller tenant (teamId / tenantId in the body ignored)', async () => {
      const res = await sys
        .http()
        .post(`/v1/teams/${a.team.id}/schedules`)
        .set('Authorization', aAdmin)
        .send({ action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin', teamId: b.team.id, tenantId: b.tenant.id, id: forgedId });
      refusedOrIgnored(res, 'teamId', 201);
      expect(await sys.db.suspendSchedule.count({ where: { OR: [{ teamId: b.team.id }, { tenantId: b.tenant.id }, { id: forgedId }] } })).toBe(0);
    });

    it.each([
      ['a role above the caller (platform-admin)', () => aAdmin, () => ({ role: 'platform-admin', teamId: undefined }), [400, 403]],
      ['another tenant (tenantId)', () => aAdmin, () => ({ role: 'tenant-admin', teamId: undefined, tenantId: b.tenant.id }), [404]],
      ['a team admin making a tenant admin of another team', () => aTeamAdmin, () => ({ role: 'tenant-admin', teamId: undefined }), [403]],
      ['a team admin placing a user in another team of its tenant', () => aTeamAdmin, () => ({ role: 'member', teamId: aOtherTeamId }), [403, 404]],
      ['a stored hash (passwordHash)', () => aAdmin, () => ({ passwordHash: '$argon2id$forged' }), [400]],
      ['an id', () => aAdmin, () => ({ id: forgedId }), [400]],
    ])('POST /v1/users with %s: refused, no user written', async (_n, caller, extra, wantStatus) => {
      const email = `sec-${Math.random().toString(36).slice(2, 8)}@sec.example`;
      const res = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', caller())
        .send({ email, name: 'X', password: 'cedar-harbor-17-finches', role: 'member', teamId: a.team.id, ...extra() });
      expect(wantStatus).toContain(res.status);
      expectEnvelope(res, res.status);
      expect(await sys.db.user.count({ where: { email } })).toBe(0);
      expect(await sys.db.user.count({ where: { id: forgedId } })).toBe(0);
    });

    it.each([
      ['scopes the caller does not hold (cluster:admin)', () => aAdmin, () => ({ scopes: ['jobs:read', 'cluster:admin'] }), [403]],
      ['scopes the caller does not hold (tenants:admin)', () => aAdmin, () => ({ scopes: ['tenants:admin'] }), [403]],
      ['a platform-admin role', () => aAdmin, () => ({ role: 'platform-admin' }), [400, 403]],
      ['another tenant (tenantId)', () => aAdmin, () => ({ role: 'tenant-admin', teamId: undefined, tenantId: b.tenant.id }), [404]],
      ['a team admin making a tenant-admin key', () => aTeamAdmin, () => ({ role: 'tenant-admin', teamId: undefined }), [403]],
      ['a team admin making a key for another team', () => aTeamAdmin, () => ({ teamId: aOtherTeamId }), [403, 404]],
      ['a chosen secret hash', () => aAdmin, () => ({ hash: sha256('gk_chosen_aaaaaaaaaaaaaaaa') }), [400]],
      ['a chosen prefix', () => aAdmin, () => ({ prefix: 'chosen' }), [400]],
      ['a user binding (userId)', () => aAdmin, () => ({ userId: 'someone' }), [400]],
      ['a revokedAt', () => aAdmin, () => ({ revokedAt: null }), [400]],
    ])('POST /v1/api-keys with %s: refused, no key written', async (_n, caller, extra, wantStatus) => {
      const name = `sec-key-${Math.random().toString(36).slice(2, 8)}`;
      const res = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', caller())
        .send({ name, scopes: ['jobs:read'], role: 'member', teamId: a.team.id, ...extra() });
      expect(wantStatus).toContain(res.status);
      expectEnvelope(res, res.status);
      expect(await sys.db.apiKey.count({ where: { name } })).toBe(0);
    });
  });

  describe('credentials on every route', () => {
    let revoked: string;
    let expired: string;
    let scopeless: string;

    beforeAll(async () => {
      const made = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', aAdmin)
        .send({ name: 'to revoke', scopes: ['jobs:read'], role: 'member', teamId: a.team.id });
      expect((await sys.http().delete(`/v1/api-keys/${made.body.id}`).set('Authorization', aAdmin)).status).toBe(204);
      revoked = `Bearer ${made.body.key}`;
      expired = `Bearer ${(await createApiKey(sys.db, { name: 'expired', role: 'tenant_admin', tenantId: a.tenant.id, scopes: TENANT_SCOPES, expiresAt: new Date(Date.now() - 1000) })).key}`;
      scopeless = `Bearer ${(await createApiKey(sys.db, { name: 'no scopes', role: 'tenant_admin', tenantId: a.tenant.id, scopes: [] })).key}`;
    });

    const CREDENTIALS: [string, () => Record<string, string>][] = [
      ['no credentials', () => ({})],
      ['a malformed bearer (no key)', () => ({ Authorization: 'Bearer' })],
      ['another scheme (Basic)', () => ({ Authorization: 'Basic YWRtaW46YWRtaW4=' })],
      ['a key of the wrong shape', () => ({ Authorization: 'Bearer not-a-gantry-key-SECRETMARKER' })],
      ['an unknown well-formed key', () => ({ Authorization: 'Bearer gk_unknown1_SECRETMARKERxxxxxxxxxxxxxxxxxxxxx' })],
      ['the bootstrap key with one character changed', () => ({ Authorization: ADMIN.slice(0, -1) + 'B' })],
      ['a revoked key (revoked through the API)', () => ({ Authorization: revoked })],
      ['an expired key', () => ({ Authorization: expired })],
      ['an unknown session cookie', () => ({ Cookie: 'gantry_session=SECRETMARKERsession' })],
    ];

    it('answers 401 with the envelope on every non-public route, for every bad credential, never echoing it', async () => {
      const doc = (await sys.http().get('/openapi.json')).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
      const failures: string[] = [];
      let checked = 0;
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          if (!op.security?.length && path !== '/v1/events/stream') continue; // public: /healthz, /readyz, /v1/auth/login
          const url = path.replace(/\{[^}]+\}/g, jobId);
          for (const [name, headers] of CREDENTIALS) {
            const h = headers();
            let req = (sys.http() as unknown as Record<string, (u: string) => import('supertest').Test>)[method]!(url);
            for (const [k, v] of Object.entries(h)) req = req.set(k, v);
            const res = await req.timeout(5000);
            checked++;
            const text = JSON.stringify(res.body ?? {}) + (res.text ?? '');
            if (res.status !== 401 || res.body?.error?.code !== 'unauthenticated' || !res.body.error.message)
              failures.push(`${method.toUpperCase()} ${path} with ${name}: ${res.status} ${text.slice(0, 150)}`);
            const secret = (h.Authorization ?? h.Cookie ?? '').replace(/^(Bearer|Basic) /, '');
            if (secret.length > 6 && text.includes(secret)) failures.push(`${method.toUpperCase()} ${path} with ${name}: echoes the credential`);
            if (text.includes('SECRETMARKER')) failures.push(`${method.toUpperCase()} ${path} with ${name}: echoes the credential`);
          }
        }
      }
      expect(failures).toEqual([]);
      expect(checked).toBeGreaterThanOrEqual(50 * CREDENTIALS.length);
    });

    it.each([
      ['GET', '/v1/jobs', 'jobs:read'],
      ['POST', '/v1/jobs', 'jobs:write'],
      ['GET', '/v1/endpoints', 'endpoints:read'],
      ['POST', '/v1/endpoints', 'endpoints:write'],
      ['GET', '/v1/teams/{team}/quotas', 'quotas:read'],
      ['PUT', '/v1/teams/{team}/quotas', 'quotas:write'],
      ['GET', '/v1/nodes', 'cluster:read'],
      ['POST', '/v1/tenants', 'tenants:admin'],
      ['POST', '/v1/sim/faults', 'cluster:admin'],
      ['GET', '/v1/events/stream', 'jobs:read'],
    ])('answers 403 (envelope, naming the scope) to a tenant admin key without the scope: %s %s', async (method, path, scope) => {
      const res = await (sys.http() as unknown as Record<string, (u: string) => import('supertest').Test>)[method.toLowerCase()]!(
        path.replace('{team}', a.team.id),
      )
        .set('Authorization', scopeless)
        .send({})
        .timeout(5000);
      expectEnvelope(res, 403);
      expect(res.body.error.message).toContain(scope);
    });

    it('rate limits sign-in attempts per address and email: 429, envelope, Retry-After (per-key limits: auth.int.spec.ts)', async () => {
      const codes: number[] = [];
      let limited: { status: number; headers: Record<string, string>; body: { error: { code: string; message: string } } } | undefined;
      for (let i = 0; i < 12; i++) {
        const r = await sys
          .http()
          .post('/v1/auth/login')
          .send({ email: 'nobody@sec.example', password: `wrong-${i}-password` });
        codes.push(r.status);
        if (r.status === 429) limited = r as never;
      }
      expect(codes.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(limited).toBeDefined();
      expectEnvelope(limited!, 429);
      expect(Number(limited!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(limited!.headers['retry-after'])).toBeLessThanOrEqual(60);
    });
  });

  describe('secrets: never logged, never stored in the clear, compared in constant time', () => {
    let captured: string[];
    let restore: () => void;

    /** Captures everything the process logs: Nest loggers (every level), console, stdout and stderr. */
    function captureLogs() {
      captured = [];
      const record = (...args: unknown[]) =>
        void captured.push(args.map((x) => (x instanceof Error ? `${x.message} ${x.stack}` : typeof x === 'string' ? x : JSON.stringify(x))).join(' '));
      const logger: LoggerService = { log: record, error: record, warn: record, debug: record, verbose: record, fatal: record };
      Logger.overrideLogger(logger);
      const spies = [
        ...(['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((m) => jest.spyOn(console, m).mockImplementation(record)),
        jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => (record(String(chunk)), true)),
        jest.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (record(String(chunk)), true)),
      ];
      restore = () => {
        for (const s of spies) s.mockRestore();
        Logger.overrideLogger(['error']);
      };
    }

    it('never logs a key secret, a password, a session token or a CSRF token (create, use, sign in, fail)', async () => {
      const user = await createUser(sys.db, { email: 'logged@sec.example', name: 'Logged', role: 'tenant_admin', tenantId: a.tenant.id, password: PASSWORD });
      captureLogs();
      let secrets: string[] = [];
      try {
        new Logger('canary').warn('canary line');
        const made = await sys
          .http()
          .post('/v1/api-keys')
          .set('Authorization', aAdmin)
          .send({ name: 'logged key', scopes: ['jobs:read'], role: 'member', teamId: a.team.id });
        expect(made.status).toBe(201);
        expect((await sys.http().get('/v1/jobs').set('Authorization', `Bearer ${made.body.key}`)).status).toBe(200);
        const wrongKey = `gk_${made.body.prefix}_WRONGwrongWRONGwrongWRONGwrong12`;
        expect((await sys.http().get('/v1/jobs').set('Authorization', `Bearer ${wrongKey}`)).status).toBe(401);
        const login = await sys.http().post('/v1/auth/login').send({ email: user.email, password: PASSWORD });
        expect(login.status).toBe(200);
        const token = (login.headers['set-cookie'] as unknown as string[])
          .find((c) => c.startsWith('gantry_session='))!
          .split(';')[0]!
          .split('=')[1]!;
        const cookie = `gantry_session=${token}`;
        expect((await sys.http().post('/v1/jobs').set('Cookie', cookie).set('X-CSRF-Token', 'forged-csrf-value').send({})).status).toBe(403);
        expect(
          (
            await sys
              .http()
              .post('/v1/api-keys')
              .set('Cookie', cookie)
              .set('X-CSRF-Token', login.body.csrfToken)
              .send({ name: 'by session', scopes: ['jobs:read'], role: 'member', teamId: a.team.id })
          ).status,
        ).toBe(201);
        const wrongPassword = 'definitely-not-the-password-99';
        expect((await sys.http().post('/v1/auth/login').send({ email: user.email, password: wrongPassword })).status).toBe(401);
        const userPassword = 'tangerine-summit-23-voles';
        expect(
          (
            await sys
              .http()
              .post('/v1/users')
              .set('Authorization', aAdmin)
              .send({ email: 'made@sec.example', name: 'Made', password: userPassword, role: 'member', teamId: a.team.id })
          ).status,
        ).toBe(201);
        await new Promise((r) => setTimeout(r, 300)); // let fire-and-forget writes (audit, last use) log if they would
        secrets = [
          made.body.key,
          made.body.key.split('_')[2],
          wrongKey,
          PASSWORD,
          wrongPassword,
          userPassword,
          token,
          login.body.csrfToken,
          BOOTSTRAP_ADMIN_KEY,
          aAdmin.slice(7),
        ];
      } finally {
        restore();
      }
      expect(captured.join('\n')).toContain('canary line'); // the capture works
      const leaks = secrets.filter((s) => captured.some((line) => line.includes(s)));
      expect(leaks).toEqual([]);
      // Nor in the audit log (its request bodies are redacted).
      const audit = JSON.stringify(await sys.db.auditLog.findMany());
      expect(secrets.filter((s) => audit.includes(s))).toEqual([]);
    });

    it('stores no secret in the clear: keys by sha256 only, passwords as argon2id, sessions by token hash', async () => {
      const made = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', aAdmin)
        .send({ name: 'at rest', scopes: ['jobs:read'], role: 'member', teamId: a.team.id });
      const row = await sys.db.apiKey.findUniqueOrThrow({ where: { id: made.body.id } });
      expect(row.hash).toBe(sha256(made.body.key));
      expect(row.prefix).toBe(made.body.key.split('_')[1]);
      const login = await sys.http().post('/v1/auth/login').send({ email: 'logged@sec.example', password: PASSWORD });
      const token = (login.headers['set-cookie'] as unknown as string[])
        .find((c) => c.startsWith('gantry_session='))!
        .split(';')[0]!
        .split('=')[1]!;
      const session = await sys.db.session.findUniqueOrThrow({ where: { tokenHash: sha256(decodeURIComponent(token)) } });
      expect(session.tokenHash).not.toContain(token);
      for (const u of await sys.db.user.findMany()) if (u.passwordHash !== null) expect(u.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      // No table of the database holds a key secret, a password or a session token in the clear.
      // (The CSRF token is stored as issued by design: it is no credential on its own, only with the cookie.)
      const secret = made.body.key.split('_')[2] as string;
      const tables = await sys.db.$queryRawUnsafe<{ tablename: string }[]>(`SELECT tablename::text AS tablename FROM pg_tables WHERE schemaname = 'public'`);
      const found: string[] = [];
      for (const { tablename } of tables) {
        for (const s of [secret, PASSWORD, 'tangerine-summit-23-voles', decodeURIComponent(token)]) {
          const [{ n }] = await sys.db.$queryRawUnsafe<{ n: number }[]>(
            `SELECT count(*)::int AS n FROM "${tablename}" t WHERE t::text LIKE '%' || $1 || '%'`,
            s,
          );
          if (n) found.push(`${tablename} holds ${s.slice(0, 6)}…`);
        }
      }
      expect(tables.length).toBeGreaterThan(10);
      expect(found).toEqual([]);
    });

    it('compares the bootstrap key and CSRF tokens with crypto.timingSafeEqual, also when the lengths differ', async () => {
      // API keys and session tokens are never compared: they are found by the sha256 of the whole
      // secret through a unique index (the hash of a guess tells nothing about the stored one), and
      // passwords are checked by argon2's verify. What is compared goes through common/safe-equal.ts.
      const login = await sys.http().post('/v1/auth/login').send({ email: 'logged@sec.example', password: PASSWORD });
      const cookie = (login.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]!).join('; ');
      const flip = (t: string) => t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A');
      const spy = jest.spyOn(nodeCrypto, 'timingSafeEqual');
      try {
        const cases: [string, () => Promise<{ status: number }>, number][] = [
          ['the bootstrap key', () => sys.http().get('/v1/me').set('Authorization', ADMIN), 200],
          ['a CSRF token of another length', () => sys.http().post('/v1/jobs').set('Cookie', cookie).set('X-CSRF-Token', 'x').send({}), 403],
          [
            'a CSRF token of the right length, one character off',
            () => sys.http().post('/v1/jobs').set('Cookie', cookie).set('X-CSRF-Token', flip(login.body.csrfToken)).send({}),
            403,
          ],
          ['a CSRF token of the right value', () => sys.http().post('/v1/auth/logout').set('Cookie', cookie).set('X-CSRF-Token', login.body.csrfToken), 204],
        ];
        for (const [what, call, want] of cases) {
          spy.mockClear();
          const res = await call();
          expect([what, res.status]).toEqual([what, want]);
          expect([what, spy.mock.calls.length > 0]).toEqual([what, true]);
        }
      } finally {
        spy.mockRestore();
      }
    });

    it('has no `===` / `!==` on a secret, hash, token or CSRF value in the auth, key, user and session code', () => {
      const dirs = ['modules/auth', 'modules/api-keys', 'modules/users', 'common'].map((d) => join(__dirname, d));
      const offending: string[] = [];
      for (const dir of dirs) {
        for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'))) {
          readFileSync(join(dir, file), 'utf8')
            .split('\n')
            .forEach((line, i) => {
              // bodyHash (idempotency) is a digest of a request body, not a secret.
              if (/\b\w*(hash|token|secret|csrf|password)\w*\b\s*[!=]==|[!=]==\s*\b\w*(hash|token|secret|csrf|password)/i.test(line.replace(/bodyHash/g, '')))
                offending.push(`${file}:${i + 1}: ${line.trim()}`);
            });
        }
      }
      expect(offending).toEqual([]);
    });
  });
});
