import type { PrismaClient } from '@gantry/db';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * The planner on the cluster's own data: the job history as a workload (a tenant admin replays
 * its own tenant's jobs only) and the live inventory as a cluster.
 */
describe('planner on the cluster’s history and inventory (real Postgres and Redis)', () => {
  let sys: TestSystem;
  let a: Awaited<ReturnType<typeof makeTenant>>;
  let b: Awaited<ReturnType<typeof makeTenant>>;
  let empty: Awaited<ReturnType<typeof makeTenant>>;
  const platform = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
  const DAY = 86_400_000;

  /** A job that ran `runSeconds`, submitted `daysAgo` days ago. */
  async function ranJob(db: PrismaClient, t: typeof a, name: string, daysAgo: number, runSeconds: number, resources: object, state = 'succeeded') {
    const created = new Date(Date.now() - daysAgo * DAY);
    const started = new Date(created.getTime() + 30_000);
    return db.job.create({
      data: {
        tenantId: t.tenant.id,
        teamId: t.team.id,
        name,
        kind: 'batch',
        state: state as 'succeeded',
        replicas: 1,
        resources: { cpuMilli: 2000, memoryMiB: 8192, ...resources },
        createdAt: created,
        startedAt: state === 'cancelled' ? null : started,
        finishedAt: new Date(started.getTime() + runSeconds * 1000),
      },
    });
  }

  beforeAll(async () => {
    sys = await startSystem();
    a = await makeTenant(sys.db, 'history-a', { role: 'tenant_admin' });
    b = await makeTenant(sys.db, 'history-b', { role: 'tenant_admin' });
    empty = await makeTenant(sys.db, 'history-empty', { role: 'tenant_admin' });
    // tenant A: four jobs in the last week, one older, one cancelled before it ran
    for (let i = 0; i < 4; i++) await ranJob(sys.db, a, `a-${i}`, 1 + i, 3600 * (i + 1), i % 2 ? { gpus: 1 } : { gpuFraction: 0.5 });
    await ranJob(sys.db, a, 'a-old', 30, 3600, { gpus: 1 });
    await ranJob(sys.db, a, 'a-never-ran', 2, 0, { gpus: 1 }, 'cancelled');
    // tenant B: seven jobs of two GPUs
    for (let i = 0; i < 7; i++) await ranJob(sys.db, b, `b-${i}`, 1 + i / 2, 7200, { gpus: 2 });
  });
  afterAll(async () => sys?.close());

  const post = (body: object, auth: string) => sys.http().post('/v1/planner/runs').set('Authorization', auth).send(body);
  const ended = (id: string, auth: string) =>
    eventually(async () => {
      const r = (await sys.http().get(`/v1/planner/runs/${id}`).set('Authorization', auth)).body;
      return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
    }, 50_000);
  const plan = async (auth: string, days = 7) => {
    const res = await post({ workload: { kind: 'history', days }, cluster: { kind: 'inventory' }, policies: ['gantry', 'kubernetes-default'] }, auth);
    expect(res.status).toBe(202);
    return ended(res.body.id, auth);
  };

  it('replays a tenant admin’s own tenant’s jobs of the window on the live inventory', async () => {
    const run = await plan(a.auth);
    expect(run).toMatchObject({ status: 'succeeded', error: null });
    // four in the window: not the 30-day-old one, not the one cancelled before it ran, none of B's
    expect(run.result.jobs).toBe(4);
    expect(run.result.nodes).toBe(await sys.db.node.count());
    expect(run.result.gpus).toBe(await sys.db.gpu.count());
    for (const p of run.result.policies) expect(p.placed).toBe(4);
    // arrivals from 4 days ago (the first, t = 0) to 1 day ago (t = 3 d) with its 1 h run: the
    // replay keeps the recorded times
    expect(run.result.horizonSeconds).toBeGreaterThanOrEqual(3 * 86_400 + 3600 - 60);
    expect(run.result.horizonSeconds).toBeLessThan(3 * 86_400 + 4 * 3600);
  });

  it('another tenant admin replays only its own jobs; a wider window takes the older job', async () => {
    expect((await plan(b.auth)).result.jobs).toBe(7);
    expect((await plan(a.auth, 60)).result.jobs).toBe(5);
  });

  it('the platform admin replays every tenant’s history', async () => {
    const run = await plan(platform);
    expect(run.status).toBe('succeeded');
    expect(run.result.jobs).toBeGreaterThanOrEqual(11);
  });

  it('a tenant without jobs in the window gets 400 naming the field', async () => {
    const res = await post({ workload: { kind: 'history', days: 7 }, cluster: { kind: 'inventory' } }, empty.auth);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('workload.history.days');
  });

  it('refuses a window out of range, naming the field', async () => {
    const res = await post({ workload: { kind: 'history', days: 0 }, cluster: { kind: 'inventory' } }, a.auth);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain('days');
  });

  const small = { kind: 'generator', jobs: 120, meanInterarrivalSeconds: 30, meanDurationSeconds: 1200, mix: { share: 0.8, whole: 0.2, multi: 0 } };
  const node = (name: string, model: string, cpuMilli: unknown = 64000) => ({
    name,
    cpuMilli,
    memoryMiB: 262144,
    gpus: Array.from({ length: 4 }, () => ({ model, memoryMiB: 81920, nvlinkDomain: 0 })),
  });
  const topology = (...nodes: object[]) => JSON.stringify({ spines: [{ name: 's0', leaves: [{ name: 'l0', nodes }] }] });

  it('replays on a topology file', async () => {
    const res = await post(
      { workload: small, cluster: { kind: 'topology', json: topology(node('t0', 'A100-80GB'), node('t1', 'H100-80GB')) }, policies: ['gantry'] },
      a.auth,
    );
    expect(res.status).toBe(202);
    const run = await ended(res.body.id, a.auth);
    expect(run).toMatchObject({ status: 'succeeded', result: { nodes: 2, gpus: 8, jobs: 120 } });
  });

  it.each([
    ['not JSON', '{"spines": [', 'cluster.topology.json'],
    ['a node without CPU', topology(node('t0', 'A100-80GB', -1)), 'cluster.topology.spines[0].leaves[0].nodes[0].cpuMilli'],
    ['an unknown GPU model', topology(node('t0', 'A100-80GB'), node('t1', 'Q9000')), 'cluster.topology[row 2].model'],
  ])('refuses a topology file that is %s, naming the field', async (_name, json, field) => {
    const res = await post({ workload: small, cluster: { kind: 'topology', json } }, a.auth);
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});
