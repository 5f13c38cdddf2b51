import type { AddressInfo } from 'node:net';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * Telemetry through the whole system: the worker's repeatable `telemetry` queue samples the
 * simulated cluster into rollups; the API reports them per team, tenant, model and node,
 * confined to the caller's tenant; /metrics and the live event stream.
 */
describe('utilization (real Postgres and Redis)', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  let globex: Awaited<ReturnType<typeof makeTenant>>;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
  let runningJobId: string;
  let idleGpuId: string;

  const get = (path: string, auth: string) => sys.http().get(path).set('Authorization', auth);
  const report = async (auth: string, groupBy: string) => {
    const to = new Date(Date.now() + 60_000).toISOString();
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const r = await get(`/v1/utilization?groupBy=${groupBy}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&step=5m`, auth);
    expect(r.status).toBe(200);
    return r.body as {
      series: { key: string; label: string; now?: unknown; totals: { allocatedGpuHours: number; capacityGpuHours: number | null; cost: number } }[];
    };
  };

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_TELEMETRY_SECONDS: '1' });
    acme = await makeTenant(sys.db, 'acme-util', { quota: { guaranteed: 16, limit: 40 } });
    globex = await makeTenant(sys.db, 'globex-util');
    await eventually(async () => (await sys.db.gpu.count()) >= 256);

    // A running job of acme (whole GPUs, runs until cancelled).
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', acme.auth)
      .send({ teamId: acme.team.id, name: 'util-train', kind: 'training', resources: { gpus: 2, gpuModel: 'A100-80GB' } });
    expect(res.status).toBe(201);
    runningJobId = res.body.id;
    await eventually(async () => (await get(`/v1/jobs/${runningJobId}`, acme.auth)).body.state === 'running');

    // A GPU held by acme with nothing running on it: allocated but idle.
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'H100-80GB', allocations: { none: { endedAt: null } } }, orderBy: { id: 'desc' } });
    idleGpuId = gpu.id;
    await sys.db.allocation.create({
      data: {
        tenantId: acme.tenant.id,
        teamId: acme.team.id,
        replica: 0,
        nodeId: gpu.nodeId,
        gpuId: gpu.id,
        gpuModel: gpu.model,
        gpuUnits: 1,
        activeSlot: `${gpu.id}:whole`,
        startedAt: new Date(Date.now() - 60_000),
      },
    });
    await eventually(async () => (await sys.db.usageRollup.count({ where: { teamId: acme.team.id, allocatedSeconds: { gt: 2 } } })) > 0, 20_000);
  }, 60_000);
  afterAll(async () => sys?.close());

  it('keeps the capacity summary when no groupBy is given', async () => {
    const r = await get('/v1/utilization', acme.auth);
    expect(r.status).toBe(200);
    expect(r.body.byModel.map((m: { gpuModel: string }) => m.gpuModel)).toContain('H100-80GB');
  });

  it('reports a team its GPU-hours, measured use and cost', async () => {
    const r = await report(acme.auth, 'team');
    expect(r.series.map((s) => s.key)).toEqual([acme.team.id]);
    const s = r.series[0]!;
    expect(s.label).toBe('acme-util team');
    expect(s.totals.allocatedGpuHours).toBeGreaterThan(0);
    expect(s.totals.cost).toBeGreaterThanOrEqual(0);
    expect(s.totals.capacityGpuHours).toBeNull();
    expect(s.now).toEqual({ allocatedGpus: 3, quotaGuaranteed: 16, quotaLimit: 40 });
  });

  it('shows another tenant none of the first tenant’s usage, in any grouping and in the CSV', async () => {
    for (const groupBy of ['tenant', 'node', 'gpuModel']) {
      expect((await report(globex.auth, groupBy)).series).toEqual([]);
    }
    // globex sees its own team (quota, nothing used) and nothing of acme's.
    const teams = await report(globex.auth, 'team');
    expect(teams.series.map((s) => s.key)).toEqual([globex.team.id]);
    expect(teams.series[0]!.totals.allocatedGpuHours).toBe(0);
    const csv = await get('/v1/utilization?groupBy=team&format=csv', globex.auth);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/text\/csv/);
    expect(csv.text).not.toContain(acme.team.id);
    const idle = await get('/v1/utilization/idle?minIdleSeconds=0', globex.auth);
    expect(idle.body.items).toEqual([]);
  });

  it('limits a tenant to its own usage when grouping by node, and shows the platform admin everything with capacity', async () => {
    const nodes = await report(acme.auth, 'node');
    expect(nodes.series.length).toBeGreaterThanOrEqual(1);
    for (const s of nodes.series) expect(s.totals.capacityGpuHours).toBeNull();
    const byModel = await report(admin, 'gpuModel');
    const a100 = byModel.series.find((s) => s.key === 'A100-80GB')!;
    expect(a100.totals.capacityGpuHours).toBeGreaterThan(a100.totals.allocatedGpuHours);
    const tenants = await report(admin, 'tenant');
    expect(tenants.series.map((s) => s.label)).toContain('acme-util');
  });

  it('exports CSV lines for the caller’s teams', async () => {
    const csv = await get('/v1/utilization?groupBy=team&step=1h&format=csv', acme.auth);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-disposition']).toContain('gantry-utilization-team.csv');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toMatch(/^team,label,bucket_start,/);
    expect(lines.slice(1).every((l) => l.startsWith(`${acme.team.id},acme-util team,`))).toBe(true);
    expect(lines.length).toBeGreaterThanOrEqual(2);
  });

  it('flags the allocated but idle GPU and names who holds it', async () => {
    const idle = await eventually(async () => {
      const r = await get('/v1/utilization/idle?minIdleSeconds=0', acme.auth);
      return r.body.items.find((i: { gpuId: string }) => i.gpuId === idleGpuId);
    });
    expect(idle).toMatchObject({ teamId: acme.team.id, teamName: 'acme-util team', gpuModel: 'H100-80GB', jobId: null });
    expect(idle.smPct).toBeLessThan(5);
    const busy = (await get('/v1/utilization/idle?minIdleSeconds=0', acme.auth)).body.items.map((i: { jobId: string | null }) => i.jobId);
    expect(busy).not.toContain(runningJobId);
  });

  it('counts the idle GPU-hours of the held-but-idle H100 for its team and model, not the busy A100s; from/to validated by field', async () => {
    type Totals = { allocatedGpuHours: number; idleGpuHours: number };
    const models = await eventually(async () => {
      const r = (await report(acme.auth, 'gpuModel')) as unknown as { series: { key: string; totals: Totals }[] };
      return (r.series.find((s) => s.key === 'H100-80GB')?.totals.idleGpuHours ?? 0) > 0 ? r : undefined;
    });
    const h100 = models.series.find((s) => s.key === 'H100-80GB')!.totals;
    // nothing runs on the H100: (nearly) all its held hours are idle, never more than it held
    expect(h100.idleGpuHours).toBeLessThanOrEqual(h100.allocatedGpuHours);
    expect(h100.idleGpuHours).toBeGreaterThan(h100.allocatedGpuHours / 2);
    // the training job keeps its A100s busy (idle at most while it starts)
    const a100 = models.series.find((s) => s.key === 'A100-80GB')!.totals;
    expect(a100.idleGpuHours).toBeLessThan(a100.allocatedGpuHours / 2);
    const team = (await report(acme.auth, 'team')) as unknown as { series: { key: string; totals: Totals }[] };
    expect(team.series[0]!.totals.idleGpuHours).toBeGreaterThan(0);

    const field = async (q: string) => {
      const r = await get(`/v1/utilization?groupBy=team&${q}`, acme.auth);
      expect(r.status).toBe(400);
      return (r.body.error.details as { field: string }[])[0]!.field;
    };
    expect(await field('from=2026-11-30T12:00:00Z&to=2026-11-30T11:00:00Z')).toBe('from');
    expect(await field('from=2026-07-01T00:00:00Z&to=2026-11-30T00:00:00Z&step=1d')).toBe('from');
  });

  it('answers the heatmap with every GPU and its live sample', async () => {
    const r = await get('/v1/utilization/gpus', acme.auth);
    expect(r.status).toBe(200);
    // The run's database is shared by every spec: compare with what it holds.
    expect(r.body.gpus.id).toHaveLength(await sys.db.gpu.count());
    expect(r.body.nodes).toHaveLength(await sys.db.node.count());
    const i = r.body.gpus.id.indexOf(idleGpuId);
    expect(r.body.gpus.allocated[i]).toBe(1);
    expect(r.body.gpus.smPct.filter((s: number | null) => s !== null && s > 50).length).toBeGreaterThanOrEqual(2);
    // the time of the newest tick (one a second here), though most GPUs' states have not changed since long before
    expect(Date.now() - Date.parse(r.body.at)).toBeLessThan(15_000);
  });

  it('writes a GPU`s latest state and raw sample only when it changed, while the ticks go on', async () => {
    // an idle GPU nobody holds: 0 % SM, idle power, tick after tick
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'H100-80GB', allocations: { none: { endedAt: null } } }, orderBy: { id: 'asc' } });
    const before = await sys.db.gpuTelemetry.findUniqueOrThrow({ where: { gpuId: gpu.id } });
    const samples = await sys.db.gpuSample.count({ where: { gpuId: gpu.id } });
    const ticks = await sys.db.telemetryTick.count();
    await eventually(async () => (await sys.db.telemetryTick.count()) >= ticks + 2, 20_000);
    const after = await sys.db.gpuTelemetry.findUniqueOrThrow({ where: { gpuId: gpu.id } });
    expect(after.smPct).toBe(0);
    expect(after.at.getTime()).toBe(before.at.getTime());
    expect(await sys.db.gpuSample.count({ where: { gpuId: gpu.id } })).toBe(samples);
    // a GPU at work changes from tick to tick: its samples follow it
    // (read until no tick wrote between the two reads)
    await eventually(async () => {
      const busy = await sys.db.gpuTelemetry.findFirstOrThrow({ where: { smPct: { gt: 50 } }, orderBy: { gpuId: 'asc' } });
      const newest = await sys.db.gpuSample.findFirst({ where: { gpuId: busy.gpuId }, orderBy: { at: 'desc' } });
      return newest?.at.getTime() === busy.at.getTime() && newest.smPct === busy.smPct && newest.powerW === busy.powerW;
    }, 10_000);
  });

  it.each([
    { name: 'an unknown groupBy', query: 'groupBy=user', wantField: 'groupBy' },
    { name: 'from after to', query: 'groupBy=team&from=2026-11-30T12:00:00Z&to=2026-11-30T11:00:00Z', wantMessage: /before/ },
    { name: 'too many points', query: 'groupBy=team&from=2026-09-15T00:00:00Z&to=2026-11-30T00:00:00Z&step=1m', wantMessage: /limit is 2000 points/ },
    { name: 'a malformed step', query: 'groupBy=team&step=fast', wantField: 'step' },
    { name: 'a malformed date', query: 'groupBy=team&from=yesterday', wantField: 'from' },
  ])('answers 400 for $name', async ({ query, wantField, wantMessage }) => {
    const r = await get(`/v1/utilization?${query}`, acme.auth);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    if (wantField) expect(r.body.error.details[0].field).toBe(wantField);
    if (wantMessage) expect(r.body.error.message).toMatch(wantMessage);
  });

  it('exposes Prometheus metrics', async () => {
    const r = await sys.http().get('/metrics').set('Authorization', admin);
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/gantry_gpus\{model="H100-80GB",state="total"\} \d+/);
    expect(r.text).toMatch(/gantry_placements_total [1-9]/);
    expect(r.text).toMatch(/gantry_scheduling_cycle_seconds_count [1-9]/);
    expect(r.text).toContain('# TYPE gantry_queue_depth gauge');
    expect(r.text).toMatch(/gantry_failovers_total \d+/);
    expect(r.text).toMatch(/gantry_cold_starts_total \d+/);
  });

  it('streams live job events through Redis to the caller’s tenant only', async () => {
    const server = sys.api.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const open = async (auth: string) => {
      const ctrl = new AbortController();
      const res = await fetch(`http://127.0.0.1:${port}/v1/events/stream`, { headers: { authorization: auth }, signal: ctrl.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      const reader = res.body!.getReader();
      let text = '';
      void (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            text += new TextDecoder().decode(value);
          }
        } catch {
          /* aborted */
        }
      })();
      return { text: () => text, close: () => ctrl.abort() };
    };
    const mine = await open(acme.auth);
    const theirs = await open(globex.auth);
    await eventually(async () => mine.text().includes('event: ready') && theirs.text().includes('event: ready'));
    const cancel = await sys.http().post(`/v1/jobs/${runningJobId}/cancel`).set('Authorization', acme.auth);
    expect(cancel.status).toBe(200);
    await eventually(async () => mine.text().includes('job.cancelled'), 10_000);
    expect(mine.text()).toContain('event: job');
    expect(theirs.text()).not.toContain(runningJobId);
    mine.close();
    theirs.close();
  });
});
