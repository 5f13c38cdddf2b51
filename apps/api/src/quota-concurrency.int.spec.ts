import { SchedulingRepository } from './modules/scheduling/scheduling.repository';
import type { NewAllocation } from './modules/allocations/gpu-slots';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';

/**
 * "200 concurrent submissions against one team never take it over its limit", proved twice:
 * at the commit (200 racing placement commits, each re-checking the quota under a per-team
 * advisory lock) and through the API (200 concurrent POST /v1/jobs, the whole system running).
 */
describe('team limit under 200 concurrent submissions (real Postgres)', () => {
  let sys: TestSystem;

  beforeAll(async () => {
    // 200 commits at once queue for the pool's connections: on a busy machine the last wait longer
    // than the default 10 s, which would fail them for a reason that is not the quota guard's.
    sys = await startSystem({ GANTRY_RECONCILE_SECONDS: '3600', GANTRY_RATE_LIMIT_PER_MINUTE: '100000', GANTRY_DB_TX_MAX_WAIT_MS: '60000' });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => {
    // Leave the shared test database as found: no job of these teams active, no GPU held.
    const teams = { team: { tenant: { slug: { in: ['guard-200', 'submit-200'] } } } };
    await sys?.db.allocation.updateMany({ where: { endedAt: null, job: teams }, data: { endedAt: new Date(), activeSlot: null } });
    await sys?.db.job.updateMany({ where: { ...teams, state: { in: ['pending', 'starting', 'running'] } }, data: { state: 'cancelled' } });
    await sys?.close();
  }, 90_000);

  const activeUnits = async (teamId: string) =>
    Number((await sys.db.allocation.aggregate({ where: { teamId, endedAt: null }, _sum: { gpuUnits: true } }))._sum.gpuUnits ?? 0);

  it('lets at most `limit` of 200 racing commits through the quota guard', async () => {
    const t = await makeTenant(sys.db, 'guard-200', { quota: { guaranteed: 10, limit: 10 } });
    const gpus = await sys.db.gpu.findMany({ where: { mode: 'whole', allocations: { none: { endedAt: null } } }, take: 200, orderBy: { id: 'asc' } });
    expect(gpus).toHaveLength(200);
    const jobs = await Promise.all(
      gpus.map((_, i) =>
        // A GPU model no node has: the running scheduler leaves these to the racing commits below.
        sys.db.job.create({
          data: {
            tenantId: t.tenant.id,
            teamId: t.team.id,
            name: `guard-${i}`,
            kind: 'batch',
            replicas: 1,
            resources: { gpus: 1, gpuModel: 'NONE-0GB', cpuMilli: 0, memoryMiB: 0 },
          },
        }),
      ),
    );
    const repo = sys.worker.get(SchedulingRepository);
    const results = await Promise.all(
      jobs.map((j, i) => {
        const g = gpus[i]!;
        const alloc: NewAllocation = { replica: 0, nodeId: g.nodeId, gpuId: g.id, gpuModel: g.model, milli: 1000, gpuUnits: 1, cpuMilli: 0, memoryMiB: 0 };
        return repo.commitPlacement(j, [alloc], 'race', { limits: [{ gpuModel: '*', limit: 10 }], tenantTotal: null });
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(await activeUnits(t.team.id)).toBe(10);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    // Clean up: these jobs never reach the driver.
    await sys.db.allocation.updateMany({ where: { teamId: t.team.id, endedAt: null }, data: { endedAt: new Date(), activeSlot: null } });
    await sys.db.job.updateMany({ where: { teamId: t.team.id }, data: { state: 'cancelled', finishedAt: new Date() } });
  });

  it('never runs a team over its limit when 200 jobs are submitted at once through the API', async () => {
    const t = await makeTenant(sys.db, 'submit-200', { quota: { guaranteed: 12, limit: 12 } });
    let max = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        max = Math.max(max, await activeUnits(t.team.id));
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        sys
          .http()
          .post('/v1/jobs')
          .set('Authorization', t.auth)
          .send({ teamId: t.team.id, name: `burst-${i}`, kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds: 3000 } }),
      ),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(200);
    await eventually(async () => (await sys.db.job.count({ where: { teamId: t.team.id, state: 'running' } })) === 12, 30_000);
    await new Promise((r) => setTimeout(r, 1000)); // more cycles: nothing else may get in
    sampling = false;
    await sampler;
    expect(max).toBe(12);
    expect(await activeUnits(t.team.id)).toBe(12);
    expect(await sys.db.job.count({ where: { teamId: t.team.id, state: { in: ['starting', 'running'] } } })).toBe(12);
    const waiting = await sys.db.job.findFirstOrThrow({ where: { teamId: t.team.id, state: 'pending' } });
    expect((waiting.reasons as { code: string }[])[0]?.code).toBe('quota_limit');
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    await sys.db.job.updateMany({ where: { teamId: t.team.id, state: 'pending' }, data: { state: 'cancelled', finishedAt: new Date() } });
  });
});
