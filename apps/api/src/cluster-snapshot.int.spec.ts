import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Worker } from 'bullmq';
import { WorkerModule } from './app.module';
import { CLUSTER_DRIVER } from './driver/driver.provider';
import { ClusterSnapshotStore } from './modules/cluster/cluster-snapshot.store';
import { ClusterRepository } from './modules/cluster/cluster.repository';
import { SchedulingService } from './modules/scheduling/scheduling.service';
import { WorkerHost } from './worker/worker.host';
import { checkInvariants } from './invariants';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * Two workers on one database, Redis prefix and simulated cluster. Worker A keeps its cluster
 * snapshot in memory (modules/cluster/incremental-snapshot.ts) and runs its cycles only when the
 * test says so (its `schedule` consumer is paused); worker B (the test system's) schedules as usual.
 */
describe('the worker’s incremental cluster snapshot (real Postgres, two workers)', () => {
  let sys: TestSystem;
  let a: INestApplicationContext;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
  const store = () => a.get(ClusterSnapshotStore);

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_RECONCILE_SECONDS: '3600' });
    a = await NestFactory.createApplicationContext(WorkerModule.forRoot({ ...sys.config, mode: 'worker' }, { driver: sys.worker.get(CLUSTER_DRIVER) }), {
      logger: ['error'],
    });
    const consumers = (a.get(WorkerHost) as unknown as { workers: Worker[] }).workers;
    await consumers.find((w) => w.name === 'schedule')!.pause(true);
    t = await makeTenant(sys.db, 'snapshot-int', { quota: { guaranteed: 1024, limit: 1024 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => {
    await a?.close();
    await sys?.close();
  });

  const submit = async (n: number, durationSeconds = 36_000) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await sys
        .http()
        .post('/v1/jobs')
        .set('Authorization', t.auth)
        .send({ teamId: t.team.id, name: `snap-${i}`, kind: 'batch', resources: { gpus: 1 }, simulation: { durationSeconds } });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    return ids;
  };
  const allocationsIn = (nodes: Awaited<ReturnType<ClusterSnapshotStore['read']>>['nodes']) =>
    nodes.flatMap((n) => n.gpus.flatMap((g) => g.allocations.map((x) => ({ node: n.id, gpu: g.id, jobId: x.jobId }))));

  it('follows a cordon through the API and a release committed by the other worker, reading only the nodes changed', async () => {
    const first = await store().read();
    const nodeCount = first.nodes.length;
    const target = first.nodes[0]!;
    expect((await sys.http().post(`/v1/nodes/${target.id}/cordon`).set('Authorization', admin).send({ reason: 'snapshot test' })).status).toBe(200);
    const cordoned = await store().read();
    expect(cordoned.full).toBe(false);
    expect(cordoned.reread).toBeGreaterThanOrEqual(1);
    expect(cordoned.reread).toBeLessThan(nodeCount);
    expect(cordoned.nodes.find((n) => n.id === target.id)!.state).toBe('cordoned');
    expect((await sys.http().post(`/v1/nodes/${target.id}/uncordon`).set('Authorization', admin).send()).status).toBe(200);
    expect((await store().read()).nodes.find((n) => n.id === target.id)!.state).toBe('ready');

    // worker B places and starts the job; A sees its allocation, then its release
    const [id] = await submit(1);
    await eventually(async () => (await sys.db.job.findUnique({ where: { id } }))?.state === 'running');
    const held = allocationsIn((await store().read()).nodes).filter((x) => x.jobId === id);
    expect(held).toHaveLength(1);
    expect((await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', t.auth).send()).status).toBeLessThan(300);
    await eventually(async () => (await sys.db.allocation.count({ where: { jobId: id, endedAt: null } })) === 0);
    const released = await store().read();
    expect(released.full).toBe(false);
    expect(allocationsIn(released.nodes).filter((x) => x.jobId === id)).toEqual([]);
  });

  it('a snapshot that misses every change never places twice: the commit refuses, the nodes are read again, and the log catches up', async () => {
    // A small cluster to fill: two nodes of whole GPUs stay ready, the rest is cordoned.
    const nodes = await sys.db.node.findMany({ include: { gpus: true }, orderBy: { name: 'asc' } });
    const open = nodes.filter((n) => n.gpus.every((g) => g.mode === 'whole' && g.schedulable)).slice(0, 2);
    const closed = nodes.filter((n) => !open.includes(n)).map((n) => n.id);
    await sys.db.node.updateMany({ where: { id: { in: closed } }, data: { state: 'cordoned', stateReason: 'snapshot test' } });
    await store().read();
    const repo = a.get(ClusterRepository);
    // Worker A loses every delta from here on (its change-log reads answer "nothing changed").
    const blind = jest.spyOn(repo, 'changesSince').mockImplementation(async (mark: bigint) => ({ nodeIds: [], mark }));
    try {
      // Worker B fills the open nodes with long single-GPU jobs; more than fit.
      const gpus = open.reduce((k, n) => k + n.gpus.length, 0);
      await submit(gpus + 4);
      let last = -1;
      await eventually(
        async () => {
          const placed = await sys.db.job.count({ where: { teamId: t.team.id, state: { in: ['starting', 'running'] } } });
          const steady = placed === last && placed > 0;
          last = placed;
          return steady;
        },
        90_000,
        2000,
      );
      expect(await sys.db.job.count({ where: { teamId: t.team.id, state: 'pending' } })).toBeGreaterThan(0);

      // A's cycle plans on its stale picture (GPUs it believes free are held by B's placements).
      const stale = await a.get(SchedulingService).cycle();
      expect(stale.snapshot).toEqual({ full: false, reread: 0 });
      expect(stale.conflicts).toBeGreaterThan(0);
      const report = await checkInvariants(sys.db);
      expect(report.violations).toEqual([]);
      const twice = await sys.db.allocation.groupBy({
        by: ['jobId'],
        where: { endedAt: null },
        _count: { _all: true },
        having: { jobId: { _count: { gt: 1 } } },
      });
      expect(twice).toEqual([]);
      // the conflicting placements' nodes are read again at A's next read, log or no log
      expect((await store().read()).reread).toBeGreaterThan(0);
    } finally {
      blind.mockRestore();
    }
    // The log read again from the mark A kept: its picture is the database's once more.
    const caught = await store().read();
    expect(caught.full).toBe(false);
    const inDb = await sys.db.allocation.findMany({ where: { endedAt: null }, select: { gpuId: true, jobId: true } });
    const inSnapshot = allocationsIn(caught.nodes);
    expect(inSnapshot.map((x) => `${x.gpu}/${x.jobId}`).sort()).toEqual(inDb.map((x) => `${x.gpuId}/${x.jobId}`).sort());
    const fresh = await a.get(SchedulingService).cycle();
    expect(fresh.conflicts).toBe(0);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    await sys.db.node.updateMany({ where: { id: { in: closed } }, data: { state: 'ready', stateReason: null } });
  }, 120_000);
});
