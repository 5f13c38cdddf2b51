import { createApiKey, createTeam } from '@gantry/db';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';

/**
 * Borrowing and reclaim (Kueue cohort semantics) and priority preemption within a team, end to
 * end: preempted jobs are checkpointed through the driver and requeued with their progress.
 */
describe('borrowing, reclaim and preemption (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let a: { team: { id: string }; auth: string };
  let b: { team: { id: string }; auth: string };
  let keep: string[] = [];
  let cordoned: string[] = [];

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '20' });
    const t = await makeTenant(sys.db, 'reclaim-int', { quota: { guaranteed: 8, limit: 16 }, scopes: ['jobs:read', 'jobs:write', 'quotas:read'] });
    a = t;
    const teamB = await createTeam(sys.db, t.tenant.id, { name: 'b', slug: 'b', quota: { guaranteed: 8, limit: 16 } });
    const keyB = await createApiKey(sys.db, {
      name: 'b',
      role: 'member',
      tenantId: t.tenant.id,
      teamId: teamB.id,
      scopes: ['jobs:read', 'jobs:write', 'quotas:read'],
    });
    b = { team: teamB, auth: `Bearer ${keyB.key}` };
    // The tenant's pool: 16 GPUs, the two teams' guaranteed shares.
    await sys.db.tenant.update({ where: { id: t.tenant.id }, data: { gpuTotal: 16 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
    // Two 8 x A100 nodes stay: 16 GPUs for two teams guaranteed 8 each.
    // Two idle, ready 8 x A100 nodes in whole-GPU mode (earlier suites may hold or reshape others).
    const nodes = await sys.db.node.findMany({
      where: {
        state: 'ready',
        gpus: { some: { model: 'A100-80GB' }, every: { model: 'A100-80GB', mode: 'whole', health: 'healthy', allocations: { none: { endedAt: null } } } },
      },
      orderBy: { name: 'desc' },
      take: 2,
    });
    expect(nodes).toHaveLength(2);
    keep = nodes.map((n) => n.id);
    cordoned = (await sys.db.node.findMany({ where: { id: { notIn: keep }, state: 'ready' }, select: { id: true } })).map((n) => n.id);
    await sys.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'cordoned' } });
  });
  afterAll(async () => {
    await sys?.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'ready' } });
    await sys?.close();
  });

  const get = async (id: string, auth: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', auth)).body;
  const submit = async (auth: string, teamId: string, body: object) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', auth)
      .send({ teamId, kind: 'training', resources: { gpus: 8, gpuModel: 'A100-80GB' }, simulation: { durationSeconds: 2000 }, ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const state = async (id: string, auth: string, want: string) => {
    let last: { state: string; reasons: unknown } | undefined;
    try {
      return await eventually(async () => {
        const j = await get(id, auth);
        last = j;
        return j.state === want ? j : undefined;
      }, 20_000);
    } catch {
      const all = await sys.db.job.findMany({
        select: { name: true, state: true, requeueOnSuspend: true, reasons: true },
        where: { state: { notIn: ['cancelled', 'succeeded'] } },
      });
      throw new Error(`job ${id} never became ${want}: last ${last?.state} ${JSON.stringify(last?.reasons)}; jobs: ${JSON.stringify(all)}`);
    }
  };

  it('borrows idle quota for preemptible work, refuses it to non-preemptible work, and reclaims it by suspension', async () => {
    const a1 = await submit(a.auth, a.team.id, { name: 'a-own', preemptible: true });
    await state(a1, a.auth, 'running');
    // Above guaranteed: a non-preemptible job may not borrow...
    const strict = await submit(a.auth, a.team.id, { name: 'a-strict' });
    const held = await eventually(async () => {
      const j = await get(strict, a.auth);
      return j.reasons[0]?.code === 'borrow_not_allowed' ? j : undefined;
    });
    expect(held.reasons[0].message).toContain('only preemptible jobs');
    await sys.http().post(`/v1/jobs/${strict}/cancel`).set('Authorization', a.auth);
    // ...a preemptible one borrows team B's idle guaranteed GPUs.
    const a2 = await submit(a.auth, a.team.id, { name: 'a-borrow', preemptible: true });
    const borrowed = await state(a2, a.auth, 'running');
    expect(borrowed.events.map((e: { message: string }) => e.message).join(' ')).toContain('borrowed quota');
    const usage = (await sys.http().get(`/v1/teams/${a.team.id}/usage`).set('Authorization', a.auth)).body;
    expect(usage.flavours[0]).toMatchObject({ inUse: 16, borrowed: 8, guaranteed: 8, limit: 16 });
    await new Promise((r) => setTimeout(r, 1500)); // some progress to keep

    // Team B wants its guaranteed GPUs: the borrower is suspended (checkpoint) and requeued.
    const b1 = await submit(b.auth, b.team.id, { name: 'b-reclaims' });
    const bRunning = await state(b1, b.auth, 'running');
    expect(bRunning.placement).toHaveLength(1);
    const requeued = await state(a2, a.auth, 'pending');
    const types = requeued.events.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['job.preempted', 'job.requeued']));
    expect(types).not.toContain('job.failed');
    expect(requeued.progress).toBeGreaterThan(0);
    expect(requeued.placement).toEqual([]);
    // It waits with a reason a person can read: the pool is in use by its lender now.
    const waiting = await eventually(async () => {
      const j = await get(a2, a.auth);
      return j.reasons[0]?.code === 'cohort_exhausted' ? j : undefined;
    });
    expect(waiting.queuePosition).toBeGreaterThanOrEqual(1);
    // The job within A's guaranteed share was never touched.
    expect((await get(a1, a.auth)).state).toBe('running');
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    for (const [id, auth] of [
      [a1, a.auth],
      [a2, a.auth],
      [b1, b.auth],
    ] as const)
      await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', auth);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('preempts lower-priority work of the same team for a higher-priority job, never the other way', async () => {
    // Team B alone on the 16 GPUs: two low-priority preemptible jobs fill them.
    const low1 = await submit(b.auth, b.team.id, { name: 'low-1', priority: 'low', preemptible: true });
    const low2 = await submit(b.auth, b.team.id, { name: 'low-2', priority: 'low', preemptible: true });
    await state(low1, b.auth, 'running');
    await state(low2, b.auth, 'running');
    const high = await submit(b.auth, b.team.id, { name: 'urgent', priority: 'high', preemptible: true });
    await state(high, b.auth, 'running');
    // Exactly one low-priority job was preempted for it (the other may be anywhere in its own life:
    // on a starved machine a missed heartbeat can restart it, which is not preemption).
    const after = await Promise.all([get(low1, b.auth), get(low2, b.auth)]);
    const preempted = after.filter((j) => j.events.some((e: { type: string }) => e.type === 'job.preempted'));
    expect(preempted).toHaveLength(1);
    expect(preempted[0].state).toBe('pending');
    expect(preempted[0].events.find((e: { type: string }) => e.type === 'job.preempted').message).toContain('higher-priority job urgent');
    // A job of equal priority does not preempt.
    const peer = await submit(b.auth, b.team.id, { name: 'peer', priority: 'low', preemptible: true });
    await new Promise((r) => setTimeout(r, 2000));
    expect((await get(peer, b.auth)).state).toBe('pending');
    expect(await sys.db.job.count({ where: { teamId: b.team.id, state: 'running' } })).toBe(2);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    for (const id of [low1, low2, high, peer]) await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', b.auth);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('shows queue positions in fair-share order: the team using less goes first, then age', async () => {
    // The jobs the tests above cancelled have let go of their GPUs: team B uses nothing.
    await eventually(async () => (await sys.db.allocation.count({ where: { teamId: b.team.id, endedAt: null } })) === 0, 30_000);
    const a1 = await submit(a.auth, a.team.id, { name: 'a-runs', preemptible: true });
    await state(a1, a.auth, 'running');
    await sys.db.node.updateMany({ where: { id: { in: keep } }, data: { state: 'cordoned' } });
    try {
      const aWaits = await submit(a.auth, a.team.id, { name: 'a-waits', resources: { gpus: 1 } });
      const bWaits = await submit(b.auth, b.team.id, { name: 'b-waits', resources: { gpus: 1 } });
      const [aj, bj] = [await get(aWaits, a.auth), await get(bWaits, b.auth)];
      expect(aj.state).toBe('pending');
      expect(bj.queuePosition).toBeLessThan(aj.queuePosition);
      for (const [id, auth] of [
        [aWaits, a.auth],
        [bWaits, b.auth],
      ] as const)
        await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', auth);
    } finally {
      await sys.db.node.updateMany({ where: { id: { in: keep } }, data: { state: 'ready' } });
      await sys.http().post(`/v1/jobs/${a1}/cancel`).set('Authorization', a.auth);
    }
  });

  it('does not preempt for a MIG slice that a re-partition of an idle GPU can offer', async () => {
    await eventually(async () => (await sys.db.allocation.count({ where: { teamId: b.team.id, endedAt: null } })) === 0, 30_000);
    const slice = { migProfile: '7g.80gb', gpuModel: 'A100-80GB' };
    const low = await submit(b.auth, b.team.id, { name: 'low-slice', kind: 'notebook', priority: 'low', preemptible: true, resources: slice });
    await state(low, b.auth, 'running');
    // No free 7g.80gb slice now: the high-priority notebook waits for the node manager to cut one
    // from an idle GPU instead of checkpointing the low-priority one that holds the only slice.
    const high = await submit(b.auth, b.team.id, { name: 'high-slice', kind: 'notebook', priority: 'high', preemptible: true, resources: slice });
    await state(high, b.auth, 'running');
    const lowJob = await get(low, b.auth);
    expect(lowJob.state).toBe('running');
    expect(lowJob.events.some((e: { type: string }) => e.type === 'job.preempted')).toBe(false);
    for (const id of [low, high]) await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', b.auth);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });
});
