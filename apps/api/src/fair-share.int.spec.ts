import { createApiKey, createTeam } from '@gantry/db';
import type { Fairness } from '@gantry/contracts';
import type { PrismaService } from './common/prisma.service';
import { SYSTEM_SCOPE } from './common/tenant-scope';
import { FairShareRepository } from './modules/fair-share/fair-share.repository';
import { FairShareService } from './modules/fair-share/fair-share.service';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * Fair share over time, end to end: team A ran 8 GPUs for the 4 simulated hours before the test,
 * team B ran nothing; both have weight 1 and the same quota. On one 8-GPU node, A's job waits
 * longer but B's goes first; the decayed usage is persisted and a restarted worker keeps it.
 */
describe('fair share over time (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let a: { team: { id: string }; auth: string };
  let b: { team: { id: string }; auth: string };
  let cordoned: string[] = [];
  let node: { id: string; gpus: { id: string; model: string }[] };
  const SPEED = 50;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: String(SPEED), GANTRY_FAIR_SHARE_HALF_LIFE_SECONDS: '3600', GANTRY_FAIR_SHARE_HISTORY_WEIGHT: '1' });
    const t = await makeTenant(sys.db, 'fair-int', { quota: { guaranteed: 8, limit: 8 }, scopes: ['jobs:read', 'jobs:write'] });
    a = t;
    const teamB = await createTeam(sys.db, t.tenant.id, { name: 'fair-int b', slug: 'b', quota: { guaranteed: 8, limit: 8 } });
    const keyB = await createApiKey(sys.db, { name: 'b', role: 'member', tenantId: t.tenant.id, teamId: teamB.id, scopes: ['jobs:read', 'jobs:write'] });
    b = { team: teamB, auth: `Bearer ${keyB.key}` };
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
    node = (await sys.db.node.findFirst({
      where: { state: 'ready', gpus: { every: { model: 'A100-80GB', mode: 'whole', health: 'healthy', allocations: { none: { endedAt: null } } } } },
      include: { gpus: true },
      orderBy: { name: 'desc' },
    }))!;
    cordoned = (await sys.db.node.findMany({ where: { id: { not: node.id }, state: 'ready' }, select: { id: true } })).map((n) => n.id);
    await sys.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'cordoned' } });
    // A's past: all 8 GPUs for 4 simulated hours, ended a moment ago
    const now = Date.now();
    await sys.db.allocation.createMany({
      data: node.gpus.map((g) => ({
        tenantId: t.tenant.id,
        teamId: a.team.id,
        replica: 0,
        nodeId: node.id,
        gpuId: g.id,
        gpuModel: g.model,
        gpuUnits: 1,
        startedAt: new Date(now - ((4 * 3600) / SPEED) * 1000),
        endedAt: new Date(now - 1000),
      })),
    });
  });
  afterAll(async () => {
    await sys?.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'ready' } });
    await sys?.close();
  });

  const submit = async (auth: string, teamId: string, name: string, seconds: number) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', auth)
      .send({ teamId, name, kind: 'batch', resources: { gpus: 8, gpuModel: 'A100-80GB' }, simulation: { durationSeconds: seconds } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const stateOf = async (id: string) => (await sys.db.job.findUniqueOrThrow({ where: { id } })).state;

  it('the team without past usage goes first, although the other team’s job is older; the console view says why', async () => {
    const blocker = await submit(b.auth, b.team.id, 'blocker', 150); // 3 s of wall-clock
    await eventually(async () => (await stateOf(blocker)) === 'running', 20_000);
    const older = await submit(a.auth, a.team.id, 'a-after-a-busy-day', 600);
    await new Promise((r) => setTimeout(r, 50));
    const newer = await submit(b.auth, b.team.id, 'b-fresh', 600);
    const view: Fairness = (await sys.http().get('/v1/fairness').set('Authorization', a.auth).expect(200)).body;
    const teamA = view.teams.find((x) => x.teamId === a.team.id)!;
    const teamB = view.teams.find((x) => x.teamId === b.team.id)!;
    expect(view.halfLifeSeconds).toBe(3600);
    expect(teamA.decayedGpuHours).toBeGreaterThan(teamB.decayedGpuHours);
    expect(teamA.decayedAverageGpus).toBeGreaterThan(5);
    expect(teamA.entitlement).toEqual([{ gpuModel: '*', guaranteed: 8, limit: 8 }]);
    expect(teamA.share).toBeGreaterThan(teamB.share);
    expect(view.queue.map((q) => q.teamId)).toEqual([b.team.id, a.team.id]);
    expect([teamA.pending, teamB.pending]).toEqual([1, 1]);
    // A's key sees its own job's name, only the team of B's
    expect(view.queue[0]).toMatchObject({ position: 1, jobId: null, jobName: null, teamName: 'fair-int b' });
    expect(view.queue[1]).toMatchObject({ position: 2, jobId: older, jobName: 'a-after-a-busy-day' });
    expect(view.why).toMatch(/fair-int b's weighted share is .* the lowest: fair-int team/);
    await eventually(async () => (await stateOf(newer)) === 'running', 30_000);
    expect(await stateOf(older)).toBe('pending');
  });

  it('the decayed usage is persisted, and a restarted worker rolls on from it without counting anything twice', async () => {
    const row = await eventually(() => sys.db.teamUsageHistory.findUnique({ where: { teamId: a.team.id } }));
    expect(row.decayedGpuSeconds).toBeGreaterThan(8 * 3600 * 0.5);
    const before = await sys.worker.get(FairShareService).cycleHistoryGpus(Date.now());
    const fresh = new FairShareService(new FairShareRepository({ client: sys.db, reads: { client: sys.db } } as unknown as PrismaService), sys.config);
    const after = await fresh.cycleHistoryGpus(Date.now());
    expect(after[a.team.id]).toBeGreaterThan(0);
    expect(Math.abs(after[a.team.id]! - before[a.team.id]!) / before[a.team.id]!).toBeLessThan(0.05);
    const view = await fresh.teams(SYSTEM_SCOPE);
    expect(view.teams.find((t) => t.id === a.team.id)!.decayedAverageGpus).toBeCloseTo(after[a.team.id]!, 0);
  });
});
