import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTeam, createTenant } from '@gantry/db';
import { formatTopologyJson, generateTopology } from '@gantry/driver';
import { DemoHistoryService, type DemoHistoryReport } from './modules/demo-history/demo-history.service';
import { BOOTSTRAP_ADMIN_KEY, eventually, startSystem, type TestSystem } from './test-support/system';

/**
 * The demo's synthetic past (docs/demo.md) on a small cluster: a week of jobs replayed through
 * the scheduling engine, read back through the API as a user would (7-day utilisation, team
 * GPU-hours, fairness), consistent with the invariants and written once.
 */
describe('demo history (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let first: DemoHistoryReport;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
  const teams: { id: string; tenantId: string }[] = [];
  const get = (path: string) => sys.http().get(path).set('Authorization', admin);
  const counts = async () => ({
    jobs: await sys.db.job.count(),
    allocations: await sys.db.allocation.count(),
    events: await sys.db.event.count(),
    incidents: await sys.db.incident.count(),
    rollups: await sys.db.usageRollup.count({ where: { bucket: { lt: (await sys.db.demoHistory.findFirstOrThrow()).toAt } } }),
  });

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-demo-history-'));
    const file = join(dir, 'cluster.json');
    // 4 H100 and 4 A100 nodes of 8 GPUs (the A100s carry MIG slices in the replay).
    writeFileSync(
      file,
      formatTopologyJson(generateTopology({ spines: 2, leavesPerSpine: 1, nodesPerLeaf: 4, gpusPerNode: 8, models: ['H100-80GB', 'A100-80GB'] })),
    );
    // A half-life far beyond the week (simulated seconds at the test speed): the whole past still counts in fair share.
    sys = await startSystem({ GANTRY_SIM_CLUSTER: file, GANTRY_FAIR_SHARE_HALF_LIFE_SECONDS: String(365 * 86_400) });
    const acme = await createTenant(sys.db, { name: 'Acme demo', slug: 'acme-demo', gpuTotal: 48 });
    const globex = await createTenant(sys.db, { name: 'Globex demo', slug: 'globex-demo', gpuTotal: 16 });
    teams.push(await createTeam(sys.db, acme.id, { name: 'Research', slug: 'research', quota: { guaranteed: 24, limit: 36 } }));
    teams.push(await createTeam(sys.db, acme.id, { name: 'Inference', slug: 'inference', quota: { guaranteed: 8, limit: 12 } }));
    teams.push(await createTeam(sys.db, globex.id, { name: 'Vision', slug: 'vision', quota: { guaranteed: 8, limit: 12 } }));
    await eventually(async () => (await sys.db.gpu.count()) >= 64);
  }, 60_000);
  afterAll(async () => sys?.close());

  it('is not written unless asked (GANTRY_DEMO_HISTORY is off by default)', async () => {
    expect(sys.config.demoHistory.enabled).toBe(false);
    expect(await sys.db.demoHistory.count()).toBe(0);
    expect(await sys.db.job.count()).toBe(0);
  });

  it('replays a week of jobs of every team, with MIG slices, shares and a GPU fault', async () => {
    first = await sys.worker.get(DemoHistoryService).run();
    expect(first).toMatchObject({ written: true });
    if (!first.written) return;
    const jobs = await sys.db.job.findMany({ select: { teamId: true, tenantId: true, kind: true, state: true, resources: true } });
    expect(jobs.length).toBe(first.jobs);
    for (const t of teams) expect(jobs.filter((j) => j.teamId === t.id).length).toBeGreaterThan(10);
    // each job in its team's tenant
    const tenantOf = new Map(teams.map((t) => [t.id, t.tenantId]));
    expect(jobs.filter((j) => tenantOf.get(j.teamId) !== j.tenantId)).toEqual([]);
    expect(new Set(jobs.map((j) => j.kind))).toEqual(new Set(['training', 'batch', 'notebook']));
    expect(jobs.some((j) => (j.resources as { migProfile?: string }).migProfile)).toBe(true);
    expect(jobs.some((j) => (j.resources as { gpuFraction?: number }).gpuFraction)).toBe(true);
    expect(jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.state))).toBe(true);
    const incidents = await sys.db.incident.findMany();
    expect(incidents.length).toBeGreaterThanOrEqual(1);
    expect(incidents.every((i) => i.state === 'resolved' && i.xid === 79 && i.openKey === null)).toBe(true);
  }, 240_000);

  it('fills the 7-day utilisation chart across the week, not only its last minutes', async () => {
    const h = await sys.db.demoHistory.findFirstOrThrow();
    const from = new Date(h.fromAt.getTime() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const r = await get(`/v1/utilization?groupBy=gpuModel&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&step=1h`);
    expect(r.status).toBe(200);
    const byHour = new Map<string, number>();
    for (const s of r.body.series as { points: { t: string; allocatedGpuHours: number; energyKWh: number }[] }[])
      for (const p of s.points) byHour.set(p.t, (byHour.get(p.t) ?? 0) + p.allocatedGpuHours);
    const busy = [...byHour].filter(([, v]) => v > 0);
    // most hours of the week hold work, and every day of it does
    expect(busy.length).toBeGreaterThan(24 * 7 * 0.6);
    const days = new Set(busy.map(([t]) => Math.floor((Date.parse(t) - h.fromAt.getTime()) / 86_400_000)));
    for (let d = 0; d < 7; d++) expect(days.has(d)).toBe(true);
    // not flat: the daily rhythm shows as a spread between the quietest and busiest hours
    const values = busy.map(([, v]) => v);
    expect(Math.max(...values)).toBeGreaterThan(2 * Math.min(...values));
    expect(r.body.totals.energyKWh).toBeGreaterThan(0);
  });

  it('charges each team exactly the GPU-hours its allocations held', async () => {
    const h = await sys.db.demoHistory.findFirstOrThrow();
    const from = new Date(h.fromAt.getTime() - 3_600_000).toISOString();
    const to = new Date(h.toAt.getTime() + 3_600_000).toISOString();
    const r = await get(`/v1/utilization?groupBy=team&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&step=1h`);
    expect(r.status).toBe(200);
    const allocs = await sys.db.allocation.findMany({ select: { teamId: true, gpuUnits: true, startedAt: true, endedAt: true } });
    for (const t of teams) {
      const held = allocs
        .filter((a) => a.teamId === t.id)
        .reduce((s, a) => s + (Number(a.gpuUnits) * (a.endedAt!.getTime() - a.startedAt.getTime())) / 3_600_000, 0);
      const series = (r.body.series as { key: string; totals: { allocatedGpuHours: number } }[]).find((s) => s.key === t.id)!;
      expect(held).toBeGreaterThan(0);
      expect(series.totals.allocatedGpuHours).toBeCloseTo(held, 1);
    }
    // and fair share remembers it: every team has decayed usage
    const fairness = await get('/v1/fairness');
    expect(fairness.status).toBe(200);
    const usage = await sys.db.teamUsageHistory.findMany({ where: { teamId: { in: teams.map((t) => t.id) } } });
    expect(usage.length).toBe(teams.length);
    expect(usage.every((u) => u.decayedGpuSeconds > 0)).toBe(true);
  });

  it('holds no GPU slot twice at any instant of the past, stays within quotas, and passes the integrity check', async () => {
    const h = await sys.db.demoHistory.findFirstOrThrow();
    const allocs = await sys.db.allocation.findMany({
      select: {
        gpuId: true,
        teamId: true,
        tenantId: true,
        milli: true,
        migStart: true,
        migProfile: true,
        gpuUnits: true,
        startedAt: true,
        endedAt: true,
        activeSlot: true,
      },
    });
    expect(allocs.every((a) => a.endedAt && a.activeSlot === null && a.startedAt >= h.fromAt && a.endedAt <= h.toAt)).toBe(true);
    const clashes: string[] = [];
    const byGpu = new Map<string, typeof allocs>();
    for (const a of allocs) byGpu.set(a.gpuId, [...(byGpu.get(a.gpuId) ?? []), a]);
    for (const [gpu, list] of byGpu) {
      // at every start, what is already held on the GPU must leave room for the newcomer
      for (const a of list) {
        const overlap = list.filter((b) => b !== a && b.startedAt <= a.startedAt && b.endedAt! > a.startedAt);
        const kind = (x: (typeof list)[number]) => (x.migProfile ? 'mig' : x.milli < 1000 ? 'share' : 'whole');
        if (kind(a) === 'whole' && overlap.length) clashes.push(`${gpu}: whole over ${overlap.length}`);
        if (overlap.some((b) => kind(b) !== kind(a) || (kind(a) === 'mig' && b.migStart === a.migStart))) clashes.push(`${gpu}: slot clash`);
        if (kind(a) === 'share' && overlap.reduce((s, b) => s + b.milli, a.milli) > 1000) clashes.push(`${gpu}: shares over 1000`);
      }
    }
    expect(clashes).toEqual([]);
    // a team never held more than its limit: check at every allocation start
    const limit = new Map([...(await sys.db.quota.findMany({ where: { gpuModel: '*' } }))].map((q) => [q.teamId, Number(q.limit)]));
    // gpuUnits is stored to 4 decimals (a 1g slice of 7: 0.1429), so each row may read up to 0.00005 high
    for (const a of allocs) {
      const holding = allocs.filter((b) => b.teamId === a.teamId && b.startedAt <= a.startedAt && b.endedAt! > a.startedAt);
      const held = holding.reduce((s, b) => s + Number(b.gpuUnits), 0);
      expect(held).toBeLessThanOrEqual(limit.get(a.teamId)! + 0.00005 * holding.length + 1e-9);
    }
    const integrity = await get('/v1/cluster/integrity?settled=true');
    expect(integrity.status).toBe(200);
    expect(integrity.body.violations).toEqual([]);
    expect(integrity.body.ok).toBe(true);
  });

  it('adds nothing on a second run', async () => {
    const before = await counts();
    const again = await sys.worker.get(DemoHistoryService).run();
    expect(again).toEqual({ written: false, reason: 'the demo history is already written' });
    expect(await counts()).toEqual(before);
  });
});
