import { SchedulingRepository, type NewAllocation } from './modules/scheduling/scheduling.repository';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/** The commit step's guard: one GPU slot can never be held twice, whoever races for it. */
describe('placement commits (real Postgres)', () => {
  let sys: TestSystem;
  let repo: SchedulingRepository;

  beforeAll(async () => {
    // A worker that never reconciles on its own, so that this test drives the commits.
    sys = await startSystem({ GANTRY_RECONCILE_SECONDS: '3600' });
    repo = sys.worker.get(SchedulingRepository);
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  async function pendingJobs(n: number) {
    const t = await makeTenant(sys.db, `race-${Date.now()}`);
    const jobs = [];
    for (let i = 0; i < n; i++) {
      jobs.push(
        await sys.db.job.create({
          data: { tenantId: t.tenant.id, teamId: t.team.id, name: `race-${i}`, kind: 'batch', replicas: 1, resources: { gpus: 1, cpuMilli: 0, memoryMiB: 0 } },
        }),
      );
    }
    return jobs;
  }

  it('lets exactly one of many concurrent commits take the same GPU', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { mode: 'whole', allocations: { none: { endedAt: null } } } });
    const alloc: NewAllocation = { replica: 0, nodeId: gpu.nodeId, gpuId: gpu.id, gpuModel: gpu.model, milli: 1000, gpuUnits: 1, cpuMilli: 0, memoryMiB: 0 };
    const jobs = await pendingJobs(12);
    {
      // Twelve transactions at once over the repository's pool of connections.
      const results = await Promise.all(jobs.map((j) => repo.commitPlacement(j, [alloc], 'race')));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await sys.db.allocation.count({ where: { gpuId: gpu.id, endedAt: null } })).toBe(1);
      const winner = jobs[results.indexOf(true)]!;
      expect((await sys.db.job.findUniqueOrThrow({ where: { id: winner.id } })).state).toBe('starting');
      const losers = await sys.db.job.findMany({ where: { id: { in: jobs.filter((j) => j.id !== winner.id).map((j) => j.id) } } });
      expect(losers.every((j) => j.state === 'pending')).toBe(true);
    }
  });

  it('never lets shares on one GPU pass 1000 thousandths', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { mode: 'whole', allocations: { none: { endedAt: null } } }, orderBy: { id: 'desc' } });
    const jobs = await pendingJobs(8);
    const share = (milli: number, makeShared: boolean): NewAllocation => ({
      replica: 0, nodeId: gpu.nodeId, gpuId: gpu.id, gpuModel: gpu.model, milli, gpuUnits: milli / 1000, cpuMilli: 0, memoryMiB: 0, makeShared,
    });
    expect(await repo.commitPlacement(jobs[0]!, [share(300, true)], 'share')).toBe(true);
    const results = await Promise.all(jobs.slice(1).map((j) => repo.commitPlacement(j, [share(300, false)], 'share')));
    expect(results.filter(Boolean)).toHaveLength(2);
    const used = await sys.db.allocation.aggregate({ where: { gpuId: gpu.id, endedAt: null }, _sum: { milli: true } });
    expect(used._sum.milli).toBe(900);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).mode).toBe('shared');
  });

  it('refuses to commit a job that changed since the snapshot (version guard)', async () => {
    const [job] = await pendingJobs(1);
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { mode: 'whole', allocations: { none: { endedAt: null } } } });
    await sys.db.job.update({ where: { id: job!.id }, data: { state: 'cancelled', version: { increment: 1 } } });
    const ok = await repo.commitPlacement(job!, [{ replica: 0, nodeId: gpu.nodeId, gpuId: gpu.id, gpuModel: gpu.model, milli: 1000, gpuUnits: 1, cpuMilli: 0, memoryMiB: 0 }], 'stale');
    expect(ok).toBe(false);
    expect(await sys.db.allocation.count({ where: { jobId: job!.id } })).toBe(0);
  });
});
