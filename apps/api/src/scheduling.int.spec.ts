import { Prisma } from '@gantry/db';
import { SchedulingRepository } from './modules/scheduling/scheduling.repository';
import type { NewAllocation } from './modules/allocations/gpu-slots';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { ClusterRepository } from './modules/cluster/cluster.repository';
import { SchedulingService } from './modules/scheduling/scheduling.service';
import { APP_CONFIG, type AppConfig } from './config/config';

/** The commit step's guard: one GPU slot can never be held twice, whoever races for it. */
describe('placement commits (real Postgres)', () => {
  let sys: TestSystem;
  let repo: SchedulingRepository;

  beforeAll(async () => {
    // A worker that never reconciles on its own, so that this test drives the commits.
    // (and a small bound on a cycle's placements, for the deep-queue case)
    sys = await startSystem({ GANTRY_RECONCILE_SECONDS: '3600', GANTRY_CYCLE_MAX_PLACEMENTS: '40' });
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
      replica: 0,
      nodeId: gpu.nodeId,
      gpuId: gpu.id,
      gpuModel: gpu.model,
      milli,
      gpuUnits: milli / 1000,
      cpuMilli: 0,
      memoryMiB: 0,
      makeShared,
    });
    expect(await repo.commitPlacement(jobs[0]!, [share(300, true)], 'share')).toBe(true);
    const results = await Promise.all(jobs.slice(1).map((j) => repo.commitPlacement(j, [share(300, false)], 'share')));
    expect(results.filter(Boolean)).toHaveLength(2);
    const used = await sys.db.allocation.aggregate({ where: { gpuId: gpu.id, endedAt: null }, _sum: { milli: true } });
    expect(used._sum.milli).toBe(900);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).mode).toBe('shared');
  });

  it('lets a second share planned on a then-whole GPU join the share committed before it (same cycle)', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({
      where: { mode: 'whole', schedulable: true, allocations: { none: { endedAt: null } } },
      orderBy: { id: 'desc' },
    });
    const [a, b] = await pendingJobs(2);
    // Both were planned on the snapshot's whole GPU, so both ask to turn it shared.
    const share = (milli: number): NewAllocation => ({
      replica: 0,
      nodeId: gpu.nodeId,
      gpuId: gpu.id,
      gpuModel: gpu.model,
      milli,
      gpuUnits: milli / 1000,
      cpuMilli: 0,
      memoryMiB: 0,
      makeShared: true,
    });
    expect(await repo.commitPlacement(a!, [share(500)], 'first share')).toBe(true);
    expect(await repo.commitPlacement(b!, [share(250)], 'second share')).toBe(true);
    const used = await sys.db.allocation.aggregate({ where: { gpuId: gpu.id, endedAt: null }, _sum: { milli: true } });
    expect(used._sum.milli).toBe(750);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).mode).toBe('shared');
  });

  it('refuses to commit a job that changed since the snapshot (version guard)', async () => {
    const [job] = await pendingJobs(1);
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { mode: 'whole', allocations: { none: { endedAt: null } } } });
    await sys.db.job.update({ where: { id: job!.id }, data: { state: 'cancelled', version: { increment: 1 } } });
    const ok = await repo.commitPlacement(
      job!,
      [{ replica: 0, nodeId: gpu.nodeId, gpuId: gpu.id, gpuModel: gpu.model, milli: 1000, gpuUnits: 1, cpuMilli: 0, memoryMiB: 0 }],
      'stale',
    );
    expect(ok).toBe(false);
    expect(await sys.db.allocation.count({ where: { jobId: job!.id } })).toBe(0);
  });
  const whole = (gpu: { id: string; nodeId: string; model: string }): NewAllocation => ({
    replica: 0,
    nodeId: gpu.nodeId,
    gpuId: gpu.id,
    gpuModel: gpu.model,
    milli: 1000,
    gpuUnits: 1,
    cpuMilli: 0,
    memoryMiB: 0,
  });

  it('refuses a GPU taken out of scheduling (a MIG change began) after the snapshot', async () => {
    const [job] = await pendingJobs(1);
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { mode: 'whole', migCapable: true, schedulable: true, allocations: { none: { endedAt: null } } } });
    // What the MIG manager does when it starts a re-partition: the GPU leaves scheduling first.
    await sys.db.gpu.update({ where: { id: gpu.id }, data: { schedulable: false, migTarget: [{ profile: '3g.40gb', start: 0 }], migRequestedAt: new Date() } });
    try {
      expect(await repo.commitPlacement(job!, [whole(gpu)], 'stale snapshot')).toBe(false);
      expect(await sys.db.allocation.count({ where: { gpuId: gpu.id, endedAt: null } })).toBe(0);
      expect((await sys.db.job.findUniqueOrThrow({ where: { id: job!.id } })).state).toBe('pending');
    } finally {
      await sys.db.gpu.update({ where: { id: gpu.id }, data: { schedulable: true, migTarget: Prisma.DbNull, migRequestedAt: null } });
    }
  });

  it('refuses a whole GPU that became MIG and a MIG slice that no longer exists', async () => {
    const [a, b] = await pendingJobs(2);
    const gpu = await sys.db.gpu.findFirstOrThrow({
      where: { mode: 'whole', migCapable: true, schedulable: true, allocations: { none: { endedAt: null } } },
      orderBy: { id: 'desc' },
    });
    await sys.db.gpu.update({ where: { id: gpu.id }, data: { mode: 'mig', instances: { create: [{ profile: '3g.40gb', start: 4, size: 4 }] } } });
    try {
      expect(await repo.commitPlacement(a!, [whole(gpu)], 'whole on a MIG GPU')).toBe(false);
      const slice = (start: number): NewAllocation => ({ ...whole(gpu), migProfile: '3g.40gb', migStart: start, gpuUnits: 3 / 7 });
      expect(await repo.commitPlacement(b!, [slice(0)], 'a slice that is not there')).toBe(false);
      expect(await repo.commitPlacement(b!, [slice(4)], 'the slice that is there')).toBe(true);
      expect(await sys.db.allocation.findMany({ where: { gpuId: gpu.id, endedAt: null }, select: { jobId: true, migStart: true } })).toEqual([
        { jobId: b!.id, migStart: 4 },
      ]);
      await sys.db.allocation.updateMany({ where: { jobId: b!.id }, data: { endedAt: new Date(), activeSlot: null } });
      await sys.db.job.update({ where: { id: b!.id }, data: { state: 'cancelled', finishedAt: new Date() } });
    } finally {
      await sys.db.gpuInstance.deleteMany({ where: { gpuId: gpu.id } });
      await sys.db.gpu.update({ where: { id: gpu.id }, data: { mode: 'whole' } });
    }
  });

  it('never gives one GPU whole to one job and a share of it to another, however they race', async () => {
    const gpus = await sys.db.gpu.findMany({
      where: { mode: 'whole', schedulable: true, allocations: { none: { endedAt: null } } },
      take: 10,
      orderBy: { id: 'asc' },
    });
    const jobs = await pendingJobs(gpus.length * 2);
    const results = await Promise.all(
      gpus.flatMap((gpu, i) => [
        repo.commitPlacement(jobs[2 * i]!, [whole(gpu)], 'whole'),
        repo.commitPlacement(jobs[2 * i + 1]!, [{ ...whole(gpu), milli: 500, gpuUnits: 0.5, makeShared: true }], 'share'),
      ]),
    );
    for (let i = 0; i < gpus.length; i++) expect([results[2 * i], results[2 * i + 1]].filter(Boolean)).toHaveLength(1);
    const held = await sys.db.allocation.groupBy({ by: ['gpuId'], where: { gpuId: { in: gpus.map((g) => g.id) }, endedAt: null }, _count: true });
    expect(held.map((h) => h._count)).toEqual(gpus.map(() => 1));
  });

  describe("a cycle's placements in one transaction (commitPlacements)", () => {
    const free = (take: number) =>
      sys.db.gpu.findMany({ where: { mode: 'whole', schedulable: true, allocations: { none: { endedAt: null } } }, take, orderBy: { id: 'desc' } });

    it('commits what still holds and drops, alone, the placement whose GPU was taken meanwhile', async () => {
      const gpus = await free(3);
      const jobs = await pendingJobs(4);
      // the first GPU went to another commit since the snapshot
      expect(await repo.commitPlacement(jobs[3]!, [whole(gpus[0]!)], 'other worker')).toBe(true);
      const ok = await repo.commitPlacements(jobs.slice(0, 3).map((job, i) => ({ job, allocs: [whole(gpus[i]!)], summary: `batch ${i}` })));
      expect(ok).toEqual([false, true, true]);
      const states = await sys.db.job.findMany({ where: { id: { in: jobs.map((j) => j.id) } }, select: { id: true, state: true } });
      expect(Object.fromEntries(states.map((j) => [j.id, j.state]))).toEqual({
        [jobs[0]!.id]: 'pending',
        [jobs[1]!.id]: 'starting',
        [jobs[2]!.id]: 'starting',
        [jobs[3]!.id]: 'starting',
      });
      expect(await sys.db.event.count({ where: { jobId: { in: [jobs[1]!.id, jobs[2]!.id] }, type: 'job.placed' } })).toBe(2);
    });

    it('drops, alone, the placement whose node was cordoned since the snapshot, and the one whose node is powering down', async () => {
      // one free GPU on each of three nodes
      const candidates = await sys.db.gpu.findMany({
        where: { mode: 'whole', schedulable: true, allocations: { none: { endedAt: null } }, node: { state: 'ready', powerState: 'on' } },
        orderBy: { id: 'desc' },
        take: 200,
      });
      const oneEach = [...new Map(candidates.map((g) => [g.nodeId, g])).values()].slice(0, 3);
      expect(oneEach).toHaveLength(3);
      const jobs = await pendingJobs(3);
      const [cordoned, poweringDown] = [oneEach[0]!.nodeId, oneEach[1]!.nodeId];
      await sys.db.node.update({ where: { id: cordoned }, data: { state: 'cordoned' } });
      await sys.db.node.update({ where: { id: poweringDown }, data: { powerState: 'powering_down' } });
      try {
        const ok = await repo.commitPlacements(jobs.map((job, i) => ({ job, allocs: [whole(oneEach[i]!)], summary: `node ${i}` })));
        expect(ok).toEqual([false, false, true]);
        expect(await sys.db.allocation.count({ where: { jobId: { in: [jobs[0]!.id, jobs[1]!.id] }, endedAt: null } })).toBe(0);
        const states = await sys.db.job.findMany({ where: { id: { in: jobs.map((j) => j.id) } }, select: { id: true, state: true } });
        expect(Object.fromEntries(states.map((j) => [j.id, j.state]))).toEqual({
          [jobs[0]!.id]: 'pending',
          [jobs[1]!.id]: 'pending',
          [jobs[2]!.id]: 'starting',
        });
      } finally {
        await sys.db.node.updateMany({ where: { id: { in: [cordoned, poweringDown] } }, data: { state: 'ready', powerState: 'on' } });
      }
    });

    it('places each job and holds each GPU once when two workers commit overlapping cycles and single commits race them', async () => {
      const gpus = await free(8);
      const jobs = await pendingJobs(8);
      // worker A: job i on GPU i; worker B: the same jobs on the GPUs in reverse; plus single commits of the odd jobs
      const a = repo.commitPlacements(jobs.map((job, i) => ({ job, allocs: [whole(gpus[i]!)], summary: 'A' })));
      const b = repo.commitPlacements(jobs.map((job, i) => ({ job, allocs: [whole(gpus[7 - i]!)], summary: 'B' })));
      const singles = jobs.filter((_, i) => i % 2).map((job, k) => repo.commitPlacement(job, [whole(gpus[(2 * k + 3) % 8]!)], 'single'));
      const [ra, rb, rs] = await Promise.all([a, b, Promise.all(singles)]);
      const wins = ra.filter(Boolean).length + rb.filter(Boolean).length + rs.filter(Boolean).length;
      const held = await sys.db.allocation.findMany({ where: { gpuId: { in: gpus.map((g) => g.id) }, endedAt: null }, select: { gpuId: true, jobId: true } });
      expect(new Set(held.map((h) => h.gpuId)).size).toBe(held.length);
      expect(new Set(held.map((h) => h.jobId)).size).toBe(held.length);
      expect(held).toHaveLength(wins);
      expect(wins).toBeGreaterThan(0);
      const starting = await sys.db.job.count({ where: { id: { in: jobs.map((j) => j.id) }, state: 'starting' } });
      expect(starting).toBe(wins);
    });

    it('keeps a team within its limit whatever batches and single commits race for it', async () => {
      const t = await makeTenant(sys.db, `batch-quota-${Date.now()}`);
      const gpus = await free(24);
      const jobs = [];
      for (let i = 0; i < 24; i++) {
        jobs.push(
          await sys.db.job.create({
            data: { tenantId: t.tenant.id, teamId: t.team.id, name: `bq-${i}`, kind: 'batch', replicas: 1, resources: { gpus: 1, cpuMilli: 0, memoryMiB: 0 } },
          }),
        );
      }
      const guard = { limits: [{ gpuModel: '*', limit: 5 }], tenantTotal: null };
      const results = await Promise.all([
        repo.commitPlacements(jobs.slice(0, 8).map((job, i) => ({ job, allocs: [whole(gpus[i]!)], summary: 'b1', guard }))),
        repo.commitPlacements(jobs.slice(8, 16).map((job, i) => ({ job, allocs: [whole(gpus[8 + i]!)], summary: 'b2', guard }))),
        Promise.all(jobs.slice(16).map((job, i) => repo.commitPlacement(job, [whole(gpus[16 + i]!)], 'single', guard))),
      ]);
      const wins = results.flat().filter(Boolean).length;
      expect(wins).toBe(5);
      const held = await sys.db.allocation.aggregate({ where: { teamId: t.team.id, endedAt: null }, _sum: { gpuUnits: true } });
      expect(Number(held._sum.gpuUnits)).toBe(5);
    });
  });

  it('a deep queue is placed in bounded cycles: each places at most GANTRY_CYCLE_MAX_PLACEMENTS, defers the rest untried, and the next ones place them', async () => {
    const MAX_PLACEMENTS_PER_CYCLE = sys.worker.get<AppConfig>(APP_CONFIG).cycleMaxPlacements;
    expect(MAX_PLACEMENTS_PER_CYCLE).toBe(40);
    const t = await makeTenant(sys.db, `deep-${Date.now()}`);
    const n = MAX_PLACEMENTS_PER_CYCLE + 44;
    await sys.db.job.createMany({
      data: Array.from({ length: n }, (_, i) => ({
        tenantId: t.tenant.id,
        teamId: t.team.id,
        name: `deep-${i}`,
        kind: 'notebook',
        replicas: 1,
        resources: { gpuFraction: 0.1, cpuMilli: 0, memoryMiB: 0 },
        createdAt: new Date(Date.now() - 60_000 + i),
      })),
    });
    const mine = { teamId: t.team.id, state: 'pending' as const };
    const scheduling = sys.worker.get(SchedulingService);
    const first = await scheduling.cycle();
    expect(first.placed).toBe(MAX_PLACEMENTS_PER_CYCLE);
    expect(first.deferred).toBeGreaterThanOrEqual(44);
    const waiting = await sys.db.job.findMany({ where: mine, select: { name: true, reasons: true } });
    expect(waiting.length).toBeGreaterThanOrEqual(44);
    // untried: no reason written that would call them unplaceable
    expect(waiting.filter((j) => Array.isArray(j.reasons) && j.reasons.length)).toEqual([]);
    for (let i = 0; i < 5 && (await sys.db.job.count({ where: mine })); i++) await scheduling.cycle();
    expect(await sys.db.job.count({ where: mine })).toBe(0);
  });

  it('adds a new node once when several workers sync the same inventory at once', async () => {
    const cluster = sys.worker.get(ClusterRepository);
    const gpus = Array.from({ length: 8 }, (_, index) => ({
      index,
      model: 'H100-80GB',
      memoryMiB: 81920,
      nvlinkDomain: 0,
      migCapable: true,
      migLayout: [] as { profile: string; start: number }[],
    }));
    const inv = {
      nodes: [0, 1, 2].map((i) => ({
        name: `late-node-${i}`,
        leaf: 'late-leaf',
        spine: 'late-spine',
        cpuMilli: 96000,
        memoryMiB: 1 << 20,
        persona: 'container' as const,
        labels: {},
        gpus,
      })),
    };
    // GPU 7 of each node comes partitioned: its MIG instances are registered with it
    const partitioned = {
      ...gpus[7]!,
      migLayout: [
        { profile: '3g.40gb', start: 0 },
        { profile: '3g.40gb', start: 4 },
      ],
    };
    for (const n of inv.nodes) n.gpus = [...gpus.slice(0, 7), partitioned];
    const results = await Promise.all([cluster.syncInventory(inv), cluster.syncInventory(inv), cluster.syncInventory(inv)]);
    expect(results.reduce((s, r) => s + r.nodesAdded, 0)).toBe(3);
    expect(results.reduce((s, r) => s + r.gpusAdded, 0)).toBe(24);
    expect(await sys.db.gpu.count({ where: { node: { name: { startsWith: 'late-node-' } } } })).toBe(24);
    const mig = await sys.db.gpu.findMany({ where: { node: { name: { startsWith: 'late-node-' } }, mode: 'mig' }, include: { instances: true } });
    expect(mig.map((g) => [g.index, g.instances.map((i) => `${i.profile}@${i.start}`).sort()])).toEqual(
      Array.from({ length: 3 }, () => [7, ['3g.40gb@0', '3g.40gb@4']]),
    );
  });
});
