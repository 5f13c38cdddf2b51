import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApiKey, createUser } from '@gantry/db';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * Findings of an outside security assessment, each tried with the request that showed it and
 * kept fixed (docs/security.md lists them with their threat model). Other findings of the same
 * assessment are in security-edges.int.spec.ts.
 */
const ADMIN = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
const TEAM_SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'cluster:read'];
const ADMIN_SCOPES = [...TEAM_SCOPES, 'quotas:write'];
const PASSWORD = 'lantern-orchid-93-harbours';

/** Fixed one-minute rate windows: start a counting test well inside one, so it never straddles two. */
async function awayFromMinuteEdge(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 40_000) await new Promise((r) => setTimeout(r, 60_000 - into + 200));
}

/** A live event stream read over real HTTP: what it delivered, and a promise that settles when the server ends it. */
async function openStream(sys: TestSystem, headers: Record<string, string>) {
  const server = sys.api.getHttpServer() as Server;
  if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  const abort = new AbortController();
  const res = await fetch(`http://127.0.0.1:${port}/v1/events/stream`, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  expect(res.status).toBe(200);
  const events: { type: string; data: Record<string, unknown> }[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return 'ended';
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const type = /^event: (.*)$/m.exec(frame)?.[1] ?? 'message';
        const data = frame
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data) events.push({ type, data: JSON.parse(data) as Record<string, unknown> });
      }
    }
  })();
  await eventually(async () => events.some((e) => e.type === 'ready'), 10_000, 50);
  return { events, ended, close: () => abort.abort() };
}

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms))]);

describe('security assessment: inside one tenant and around the edges', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  let tenantAdmin: string;
  let researchAdmin: string;
  let inferenceTeamId: string;
  let inferenceMember: string;
  let stellaSession: { cookies: string; csrfToken: string };

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_RATE_LIMIT_PER_MINUTE: '100000', GANTRY_LOGIN_ADDRESS_ATTEMPTS_PER_MINUTE: '5', GANTRY_LOGIN_ATTEMPTS_PER_MINUTE: '100' });
    acme = await makeTenant(sys.db, 'assess-acme', { quota: { guaranteed: 32, limit: 64 } });
    tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'tenant admin', role: 'tenant_admin', tenantId: acme.tenant.id, scopes: ADMIN_SCOPES })).key}`;
    researchAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'research admin', role: 'team_admin', tenantId: acme.tenant.id, teamId: acme.team.id, scopes: ADMIN_SCOPES })).key}`;
    const inference = await sys
      .http()
      .post(`/v1/tenants/${acme.tenant.id}/teams`)
      .set('Authorization', tenantAdmin)
      .send({ name: 'Inference', slug: 'inference' });
    expect(inference.status).toBe(201);
    inferenceTeamId = inference.body.id;
    const q = await sys
      .http()
      .put(`/v1/teams/${inferenceTeamId}/quotas`)
      .set('Authorization', tenantAdmin)
      .send({ quotas: [{ gpuModel: '*', guaranteed: 8, limit: 16 }] });
    expect(q.status).toBe(200);
    inferenceMember = `Bearer ${(await createApiKey(sys.db, { name: 'inference member', role: 'member', tenantId: acme.tenant.id, teamId: inferenceTeamId, scopes: TEAM_SCOPES })).key}`;
    // Signed in before the sign-in limit tests spend this address's attempts.
    await createUser(sys.db, {
      email: 'stream@assess.example',
      name: 'Stella',
      role: 'member',
      tenantId: acme.tenant.id,
      teamId: acme.team.id,
      password: PASSWORD,
    });
    const login = await sys.http().post('/v1/auth/login').send({ email: 'stream@assess.example', password: PASSWORD });
    expect(login.status).toBe(200);
    stellaSession = { cookies: (login.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; '), csrfToken: login.body.csrfToken };
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 120_000);
  afterAll(async () => sys?.close());

  const job = (teamId: string, name: string, extra: object = {}) => ({
    teamId,
    name,
    kind: 'batch',
    resources: { gpus: 1 },
    simulation: { durationSeconds: 600 },
    ...extra,
  });

  describe("1. the GPU-hour budget is the tenant admin's", () => {
    beforeAll(async () => {
      const r = await sys
        .http()
        .put(`/v1/teams/${acme.team.id}/quotas`)
        .set('Authorization', tenantAdmin)
        .send({ quotas: [{ gpuModel: '*', guaranteed: 32, limit: 64, gpuHourBudget: 0, budgetPolicy: 'block' }] });
      expect(r.status).toBe(200);
    });
    afterAll(async () => {
      await sys
        .http()
        .put(`/v1/teams/${acme.team.id}/quotas`)
        .set('Authorization', tenantAdmin)
        .send({ quotas: [{ gpuModel: '*', guaranteed: 32, limit: 64 }] });
    });

    it.each([
      ['removes it (null)', { gpuHourBudget: null, budgetPolicy: 'block' }, 'gpuHourBudget'],
      ['raises it', { gpuHourBudget: 100000, budgetPolicy: 'block' }, 'gpuHourBudget'],
      ['loosens its policy', { gpuHourBudget: 0, budgetPolicy: 'preemptible-only' }, 'budgetPolicy'],
    ])('a team admin who %s gets 403 naming the field, and the budget stays', async (_what, budget, field) => {
      const res = await sys
        .http()
        .put(`/v1/teams/${acme.team.id}/quotas`)
        .set('Authorization', researchAdmin)
        .send({ quotas: [{ gpuModel: '*', guaranteed: 32, limit: 64, ...budget }] });
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('team_admin_budget');
      expect(res.body.error.details[0].field).toBe(`quotas.0.${field}`);
      const q = await sys.http().get(`/v1/teams/${acme.team.id}/quotas`).set('Authorization', researchAdmin);
      expect(q.body.quotas[0]).toMatchObject({ gpuHourBudget: 0, budgetPolicy: 'block' });
    });

    it('a team admin may still move guaranteed and limit within the ceilings: an omitted budget is kept', async () => {
      const res = await sys
        .http()
        .put(`/v1/teams/${acme.team.id}/quotas`)
        .set('Authorization', researchAdmin)
        .send({ quotas: [{ gpuModel: '*', guaranteed: 16, limit: 32 }] });
      expect(res.status).toBe(200);
      expect(res.body.quotas[0]).toMatchObject({ guaranteed: 16, limit: 32, gpuHourBudget: 0, budgetPolicy: 'block' });
      const held = await sys.http().post('/v1/jobs').set('Authorization', acme.auth).send(job(acme.team.id, 'over-budget'));
      expect(held.status).toBe(201);
      await eventually(async () => {
        const j = await sys.http().get(`/v1/jobs/${held.body.id}`).set('Authorization', acme.auth);
        return j.body.state === 'pending' && j.body.reasons.some((r: { code: string }) => r.code === 'budget_exhausted');
      });
      await sys.http().post(`/v1/jobs/${held.body.id}/cancel`).set('Authorization', acme.auth);
    });
  });

  describe('2. sign-in limits cannot be dodged with X-Forwarded-For; refused sign-ins are audited', () => {
    it('ignores X-Forwarded-For from a client that is not a trusted proxy: the address limit holds, and the audit keeps the real address', async () => {
      await createUser(sys.db, {
        email: 'xff@assess.example',
        name: 'Xavier',
        role: 'member',
        tenantId: acme.tenant.id,
        teamId: acme.team.id,
        password: PASSWORD,
      });
      await awayFromMinuteEdge();
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await sys
          .http()
          .post('/v1/auth/login')
          .set('X-Forwarded-For', `198.51.100.${i + 1}`)
          .send({ email: 'xff@assess.example', password: `wrong-${i}` });
        statuses.push(r.status);
      }
      // at most 5 attempts a minute from this address (the sign-in in beforeAll may count), whatever the header says
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(4);
      expect(statuses.slice(5)).toEqual([429, 429]);
      const right = await sys.http().post('/v1/auth/login').set('X-Forwarded-For', '203.0.113.50').send({ email: 'xff@assess.example', password: PASSWORD });
      expect(right.status).toBe(429);
      const audit = await sys.http().get('/v1/audit?action=POST /v1/auth/login&limit=50').set('Authorization', tenantAdmin);
      expect(audit.status).toBe(200);
      const refused = audit.body.items.filter((e: { actor: string }) => e.actor === 'xff@assess.example');
      expect(refused.length).toBeGreaterThanOrEqual(4); // the refused passwords; attempts stopped by the address limit are in the platform's audit
      expect(refused.map((e: { data: { outcome: string } }) => e.data.outcome)).toContain('wrong_email_or_password');
      for (const e of refused) expect(e.source).toBe('127.0.0.1');
    });

    it('limits failed attempts per account too: from a trusted proxy, many addresses still lock the account, even for the right password', async () => {
      const proxied = await startSystem({
        GANTRY_TRUSTED_PROXIES: '127.0.0.1,::1',
        GANTRY_LOGIN_ATTEMPTS_PER_MINUTE: '5',
        GANTRY_LOGIN_ADDRESS_ATTEMPTS_PER_MINUTE: '100',
      });
      try {
        const t = await makeTenant(proxied.db, 'assess-proxied');
        await createUser(proxied.db, {
          email: 'spray@assess.example',
          name: 'Sam',
          role: 'member',
          tenantId: t.tenant.id,
          teamId: t.team.id,
          password: PASSWORD,
        });
        await awayFromMinuteEdge();
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          statuses.push(
            (
              await proxied
                .http()
                .post('/v1/auth/login')
                .set('X-Forwarded-For', `192.0.2.${i + 1}`)
                .send({ email: 'spray@assess.example', password: `wrong-${i}` })
            ).status,
          );
        }
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
        const right = await proxied
          .http()
          .post('/v1/auth/login')
          .set('X-Forwarded-For', '192.0.2.200')
          .send({ email: 'spray@assess.example', password: PASSWORD });
        expect(right.status).toBe(429);
        // another account from the same addresses is not locked
        await createUser(proxied.db, {
          email: 'other@assess.example',
          name: 'Olga',
          role: 'member',
          tenantId: t.tenant.id,
          teamId: t.team.id,
          password: PASSWORD,
        });
        const other = await proxied
          .http()
          .post('/v1/auth/login')
          .set('X-Forwarded-For', '192.0.2.201')
          .send({ email: 'other@assess.example', password: PASSWORD });
        expect(other.status).toBe(200);
        // the trusted proxy's word is the audited source
        const entry = await proxied.db.auditLog.findFirst({ where: { actor: 'spray@assess.example' }, orderBy: { createdAt: 'asc' } });
        expect(entry?.source).toBe('192.0.2.1');
      } finally {
        await proxied.close();
      }
    }, 90_000);
  });

  describe("3. Idempotency-Key is the caller's own", () => {
    it('the same key from another team makes that team its own job; the same key with another body is 409', async () => {
      const researchMember = acme.auth;
      const first = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', inferenceMember)
        .set('Idempotency-Key', 'K-shared')
        .send(job(inferenceTeamId, 'inference-job'));
      expect(first.status).toBe(201);
      const other = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', researchMember)
        .set('Idempotency-Key', 'K-shared')
        .send(job(acme.team.id, 'research-job'));
      expect(other.status).toBe(201);
      expect(other.body).toMatchObject({ teamId: acme.team.id, name: 'research-job' });
      expect(other.body.id).not.toBe(first.body.id);
      const retry = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', inferenceMember)
        .set('Idempotency-Key', 'K-shared')
        .send(job(inferenceTeamId, 'inference-job'));
      expect([retry.status, retry.body.id]).toEqual([200, first.body.id]);
      const reused = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', inferenceMember)
        .set('Idempotency-Key', 'K-shared')
        .send(job(inferenceTeamId, 'another-body'));
      expect(reused.status).toBe(409);
      expect(reused.body.error.details[0].field).toBe('Idempotency-Key');
      for (const id of [first.body.id, other.body.id]) await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', tenantAdmin);
    });

    it('on the other idempotent routes too: two callers with one key make two endpoints', async () => {
      const body = (teamId: string, name: string) => ({ teamId, name, model: 'llama-3-8b', resources: { gpus: 1 } });
      const a = await sys
        .http()
        .post('/v1/endpoints')
        .set('Authorization', inferenceMember)
        .set('Idempotency-Key', 'E-shared')
        .send(body(inferenceTeamId, 'ep-inference'));
      const b = await sys
        .http()
        .post('/v1/endpoints')
        .set('Authorization', researchAdmin)
        .set('Idempotency-Key', 'E-shared')
        .send(body(acme.team.id, 'ep-research'));
      expect([a.status, b.status, a.body.error?.message, b.body.error?.message]).toEqual([201, 201, undefined, undefined]);
      expect(b.body).toMatchObject({ teamId: acme.team.id, name: 'ep-research' });
    });
  });

  describe("4-5. the live event stream: the caller's team only, and only while its credential lives", () => {
    it("a team member never receives another team's job events", async () => {
      const research = await openStream(sys, { authorization: acme.auth });
      const tenantWide = await openStream(sys, { authorization: tenantAdmin });
      try {
        const theirs = await sys.http().post('/v1/jobs').set('Authorization', inferenceMember).send(job(inferenceTeamId, 'secret-inference-run'));
        const mine = await sys.http().post('/v1/jobs').set('Authorization', acme.auth).send(job(acme.team.id, 'visible-research-run'));
        expect([theirs.status, mine.status]).toEqual([201, 201]);
        await eventually(async () => research.events.some((e) => e.data.jobId === mine.body.id), 20_000);
        await eventually(async () => tenantWide.events.some((e) => e.data.jobId === theirs.body.id), 20_000);
        expect(research.events.filter((e) => e.data.jobId === theirs.body.id)).toEqual([]);
        expect(research.events.every((e) => e.type === 'ready' || e.type === 'ping' || e.data.tenantId === null || e.data.teamId === acme.team.id)).toBe(true);
        for (const id of [theirs.body.id, mine.body.id]) await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', tenantAdmin);
      } finally {
        research.close();
        tenantWide.close();
      }
    });

    it('revoking the key ends a stream opened with it at once', async () => {
      const made = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', tenantAdmin)
        .send({ name: 'stream key', role: 'member', teamId: acme.team.id, scopes: ['jobs:read'] });
      expect(made.status).toBe(201);
      const stream = await openStream(sys, { authorization: `Bearer ${made.body.key}` });
      expect(await within(stream.ended, 1000)).toBe('still open');
      expect((await sys.http().delete(`/v1/api-keys/${made.body.id}`).set('Authorization', tenantAdmin)).status).toBe(204);
      expect(await within(stream.ended, 5000)).toBe('ended');
      expect(stream.events.some((e) => e.type === 'revoked')).toBe(true);
    });

    it('logging out ends a stream opened with the session', async () => {
      const { cookies, csrfToken } = stellaSession;
      const stream = await openStream(sys, { cookie: cookies });
      expect(await within(stream.ended, 1000)).toBe('still open');
      const out = await sys.http().post('/v1/auth/logout').set('Cookie', cookies).set('X-CSRF-Token', csrfToken);
      expect(out.status).toBe(204);
      expect(await within(stream.ended, 5000)).toBe('ended');
    });
  });

  describe('7. capacity is granted, never open by default', () => {
    it('a new tenant has a GPU total of 0, a new team no quota, and neither runs anything until an admin grants it', async () => {
      const tenant = await sys.http().post('/v1/tenants').set('Authorization', ADMIN).send({ name: 'Fresh', slug: 'assess-fresh' });
      expect(tenant.status).toBe(201);
      expect(tenant.body.gpuTotal).toBe(0);
      const team = await sys.http().post(`/v1/tenants/${tenant.body.id}/teams`).set('Authorization', ADMIN).send({ name: 'New team', slug: 'new-team' });
      const key = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', ADMIN)
        .send({ name: 'fresh admin', role: 'tenant-admin', tenantId: tenant.body.id, scopes: ADMIN_SCOPES });
      expect([team.status, key.status]).toEqual([201, 201]);
      const freshAdmin = `Bearer ${key.body.key}`;
      const big = {
        teamId: team.body.id,
        name: 'four-by-eight',
        kind: 'training',
        replicas: 4,
        resources: { gpus: 8, gpuModel: 'H100-80GB' },
        simulation: { durationSeconds: 60 },
      };
      const refused = await sys.http().post('/v1/jobs').set('Authorization', freshAdmin).send(big);
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('quota_exceeded');
      expect(refused.body.error.message).toContain("can never fit: the tenant's GPU total is 0");
      // the tenant admin cannot hand out what the platform admin has not granted
      const grant = await sys
        .http()
        .put(`/v1/teams/${team.body.id}/quotas`)
        .set('Authorization', freshAdmin)
        .send({ quotas: [{ gpuModel: '*', guaranteed: 8, limit: 32 }] });
      expect(grant.status).toBe(409);
      expect((await sys.http().put(`/v1/tenants/${tenant.body.id}/quota`).set('Authorization', ADMIN).send({ gpuTotal: 32 })).status).toBe(200);
      const noQuota = await sys.http().post('/v1/jobs').set('Authorization', freshAdmin).send(big);
      expect(noQuota.status).toBe(409);
      expect(noQuota.body.error.message).toContain('the team has no GPU quota');
      expect(
        (
          await sys
            .http()
            .put(`/v1/teams/${team.body.id}/quotas`)
            .set('Authorization', freshAdmin)
            .send({ quotas: [{ gpuModel: '*', guaranteed: 8, limit: 32 }] })
        ).status,
      ).toBe(200);
      const runs = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', freshAdmin)
        .send({ ...big, preemptible: true });
      expect(runs.status).toBe(201);
      await sys.http().post(`/v1/jobs/${runs.body.id}/cancel`).set('Authorization', freshAdmin);
    });

    it('a queued job of a team whose quota was taken away waits with the reason no_quota', async () => {
      const team = await sys
        .http()
        .post(`/v1/tenants/${acme.tenant.id}/teams`)
        .set('Authorization', tenantAdmin)
        .send({ name: 'Shrinking', slug: 'shrinking' });
      await sys
        .http()
        .put(`/v1/teams/${team.body.id}/quotas`)
        .set('Authorization', tenantAdmin)
        .send({ quotas: [{ gpuModel: '*', guaranteed: 1, limit: 1 }] });
      const key = `Bearer ${(await createApiKey(sys.db, { name: 'shrinking member', role: 'member', tenantId: acme.tenant.id, teamId: team.body.id, scopes: TEAM_SCOPES })).key}`;
      const suspended = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', key)
        .send(job(team.body.id, 'waits', { kind: 'training', simulation: { durationSeconds: 36_000 } }));
      expect(suspended.status).toBe(201);
      // a job still starting cannot be suspended yet (409): ask again until it can
      await eventually(async () => (await sys.http().post(`/v1/jobs/${suspended.body.id}/suspend`).set('Authorization', key)).status === 200);
      await eventually(async () => (await sys.http().get(`/v1/jobs/${suspended.body.id}`).set('Authorization', key)).body.state === 'suspended');
      await sys.http().put(`/v1/teams/${team.body.id}/quotas`).set('Authorization', tenantAdmin).send({ quotas: [] });
      await sys.http().post(`/v1/jobs/${suspended.body.id}/resume`).set('Authorization', key);
      let last: unknown;
      await eventually(async () => {
        const j = await sys.http().get(`/v1/jobs/${suspended.body.id}`).set('Authorization', key);
        last = j.body;
        return j.body.state === 'pending' && j.body.reasons.some((r: { code: string }) => r.code === 'no_quota');
      }, 20_000).catch((e: unknown) => {
        throw new Error(`${String(e)}; last seen: ${JSON.stringify(last)}`);
      });
      await sys.http().post(`/v1/jobs/${suspended.body.id}/cancel`).set('Authorization', key);
    });
  });

  describe('9. the console never keeps an API key: it exchanges it for a session cookie', () => {
    it('POST /v1/auth/key-session sets the httpOnly session cookie; the session acts as the key and dies with it', async () => {
      const made = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', tenantAdmin)
        .send({ name: 'console key', role: 'member', teamId: acme.team.id, scopes: ['jobs:read'] });
      const res = await sys.http().post('/v1/auth/key-session').set('Authorization', `Bearer ${made.body.key}`);
      expect(res.status).toBe(200);
      const setCookie = res.headers['set-cookie'] as unknown as string[];
      expect(setCookie.find((c) => c.startsWith('gantry_session='))).toMatch(/HttpOnly/i);
      const cookies = setCookie.map((c) => c.split(';')[0]).join('; ');
      const me = await sys.http().get('/v1/me').set('Cookie', cookies);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ kind: 'session', role: 'member', teamId: acme.team.id, scopes: ['jobs:read'] });
      // a session cannot be exchanged again, and changes need the CSRF token
      expect((await sys.http().post('/v1/auth/key-session').set('Cookie', cookies).set('X-CSRF-Token', res.body.csrfToken)).status).toBe(400);
      expect((await sys.http().delete(`/v1/api-keys/${made.body.id}`).set('Authorization', tenantAdmin)).status).toBe(204);
      expect((await sys.http().get('/v1/me').set('Cookie', cookies)).status).toBe(401);
    });
  });

  describe('11-13. keys: one budget per owner, a cap on live keys, only the owner or an admin revokes, the role caps the scopes', () => {
    it('keys minted by one member share its request budget and stop at the cap of live keys', async () => {
      const tight = await startSystem({ GANTRY_RATE_LIMIT_PER_MINUTE: '20', GANTRY_MAX_KEYS_PER_OWNER: '3' });
      try {
        const t = await makeTenant(tight.db, 'assess-tight', { scopes: ['jobs:read', 'cluster:read'] });
        await awayFromMinuteEdge();
        const minted: string[] = [];
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await tight
            .http()
            .post('/v1/api-keys')
            .set('Authorization', t.auth)
            .send({ name: `minted-${i}`, role: 'member', scopes: ['jobs:read'] });
          statuses.push(r.status);
          if (r.status === 201) minted.push(`Bearer ${r.body.key}`);
        }
        // the member's own key counts: 2 more make 3 live keys, the third is refused
        expect(statuses).toEqual([201, 201, 409]);
        const answers: number[] = [];
        for (let i = 0; i < 20; i++)
          answers.push(
            (
              await tight
                .http()
                .get('/v1/me')
                .set('Authorization', minted[i % 2]!)
            ).status,
          );
        // 3 key creations + 20 reads by one owner: the budget of 20 runs out for every key at once
        expect(answers.filter((s) => s === 429).length).toBeGreaterThan(0);
        expect((await tight.http().get('/v1/me').set('Authorization', t.auth)).status).toBe(429);
      } finally {
        await tight.close();
      }
    }, 90_000);

    it("a member cannot revoke a teammate's key (403); the owner and the team admin can", async () => {
      const alice = `Bearer ${(await createApiKey(sys.db, { name: 'alice', role: 'member', tenantId: acme.tenant.id, teamId: acme.team.id, scopes: TEAM_SCOPES })).key}`;
      const bob = `Bearer ${(await createApiKey(sys.db, { name: 'bob', role: 'member', tenantId: acme.tenant.id, teamId: acme.team.id, scopes: TEAM_SCOPES })).key}`;
      const aliceKey = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', alice)
        .send({ name: 'alice ci', role: 'member', scopes: ['jobs:read'] });
      const aliceKey2 = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', alice)
        .send({ name: 'alice laptop', role: 'member', scopes: ['jobs:read'] });
      expect([aliceKey.status, aliceKey2.status]).toEqual([201, 201]);
      const byBob = await sys.http().delete(`/v1/api-keys/${aliceKey.body.id}`).set('Authorization', bob);
      expect(byBob.status).toBe(403);
      expect((await sys.http().get('/v1/me').set('Authorization', `Bearer ${aliceKey.body.key}`)).status).toBe(200);
      expect((await sys.http().delete(`/v1/api-keys/${aliceKey.body.id}`).set('Authorization', alice)).status).toBe(204);
      expect((await sys.http().delete(`/v1/api-keys/${aliceKey2.body.id}`).set('Authorization', researchAdmin)).status).toBe(204);
    });

    it('a viewer key holding jobs:write cannot submit; a viewer key with write scopes cannot be made (400 naming scopes)', async () => {
      const forged = await createApiKey(sys.db, {
        name: 'viewer with write',
        role: 'viewer',
        tenantId: acme.tenant.id,
        teamId: acme.team.id,
        scopes: ['jobs:read', 'jobs:write'],
      });
      const submit = await sys.http().post('/v1/jobs').set('Authorization', `Bearer ${forged.key}`).send(job(acme.team.id, 'viewer-job'));
      expect(submit.status).toBe(403);
      expect((await sys.http().get('/v1/jobs').set('Authorization', `Bearer ${forged.key}`)).status).toBe(200);
      const made = await sys
        .http()
        .post('/v1/api-keys')
        .set('Authorization', tenantAdmin)
        .send({ name: 'viewer', role: 'viewer', teamId: acme.team.id, scopes: ['jobs:read', 'jobs:write'] });
      expect(made.status).toBe(400);
      expect(made.body.error.details[0]).toMatchObject({ field: 'scopes' });
      expect(made.body.error.details[0].problem).toContain('jobs:write');
    });
  });
});
