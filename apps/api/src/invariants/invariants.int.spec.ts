import { Prisma, type Gpu } from '@gantry/db';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from '../test-support/system';
import { checkInvariants, type InvariantRule } from './index';

const SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'cluster:read'];

/** Real work through the API (whole, MIG, share, gang, endpoint) leaves every invariant holding. */
describe('invariant checker on real work (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem();
    t = await makeTenant(sys.db, 'inv-real', { scopes: SCOPES, quota: { guaranteed: 64, limit: 256 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 60_000);
  afterAll(async () => sys?.close());

  const submit = async (body: object) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', t.auth)
      .send({ teamId: t.team.id, kind: 'training', ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const state = async (id: string) => (await sys.db.job.findUniqueOrThrow({ where: { id } })).state;

  it('reports no violation while whole, MIG, shared, gang and endpoint work runs, and none once it settled', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'H100-80GB', migCapable: true }, orderBy: { id: 'asc' } });
    const mig = await sys
      .http()
      .put(`/v1/gpus/${gpu.id}/mig`)
      .set('Authorization', admin)
      .send({
        layout: [
          { profile: '1g.10gb', start: 0 },
          { profile: '3g.40gb', start: 4 },
        ],
      });
    expect(mig.status).toBe(202);
    await eventually(async () => {
      const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } });
      return g.mode === 'mig' && g.schedulable;
    }, 20_000);

    const long = { simulation: { durationSeconds: 5000 } };
    const ids = [
      await submit({ name: 'whole', resources: { gpus: 1 }, ...long }),
      await submit({ name: 'mig', resources: { migProfile: '1g.10gb', gpuModel: 'H100-80GB' }, ...long }),
      await submit({ name: 'share-a', resources: { gpuFraction: 0.5 }, ...long }),
      await submit({ name: 'share-b', resources: { gpuFraction: 0.25 }, ...long }),
      await submit({ name: 'gang', replicas: 2, resources: { gpus: 8, gpuModel: 'A100-80GB' }, ...long }),
    ];
    const ep = await sys
      .http()
      .post('/v1/endpoints')
      .set('Authorization', t.auth)
      .send({ teamId: t.team.id, name: 'inv-ep', model: 'llama-3-8b', resources: { gpus: 1, gpuModel: 'H100-80GB' }, minReplicas: 1, maxReplicas: 1 });
    expect(ep.status).toBe(201);

    // while it is being placed and started: strict rules hold at every instant
    const during: unknown[] = [];
    await eventually(
      async () => {
        during.push(...(await checkInvariants(sys.db)).violations);
        const states = await Promise.all(ids.map(state));
        const replica = await sys.db.endpointReplica.findFirst({ where: { endpointId: ep.body.id, state: 'ready', endedAt: null } });
        return states.every((s) => s === 'running') && replica;
      },
      40_000,
      200,
    );
    expect(during).toEqual([]);

    const report = await checkInvariants(sys.db, { settled: true, graceSeconds: 0 });
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    // 1 whole + 1 MIG + 2 shares + 16 gang + 1 endpoint replica
    expect(report.counts.activeAllocations).toBe(21);
    expect(report.counts.migSlices).toBe(2);
    expect(report.counts.endpointReplicas).toBe(1);
    expect(report.counts.jobs).toBeGreaterThanOrEqual(5);
    const shared = await sys.db.allocation.findMany({ where: { jobId: { in: ids.slice(2, 4) }, endedAt: null } });
    // Where the engine puts the second share (the first share's GPU, or another) is its policy's
    // choice across cycles; either way each holds a share of a GPU in shared mode.
    expect(shared.map((a) => a.milli).sort()).toEqual([250, 500]);
    expect(await sys.db.gpu.count({ where: { id: { in: shared.map((a) => a.gpuId) }, mode: { not: 'shared' } } })).toBe(0);

    // cancelling releases everything: still consistent
    for (const id of ids) await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', t.auth);
    await sys.http().delete(`/v1/endpoints/${ep.body.id}`).set('Authorization', t.auth);
    await eventually(async () => (await sys.db.allocation.count({ where: { endedAt: null } })) === 0, 20_000);
    expect((await checkInvariants(sys.db, { settled: true, graceSeconds: 0 })).violations).toEqual([]);
  }, 90_000);
});

/**
 * Each rule against the corruption a bug would leave. The worker never reconciles here, so the
 * rows written directly stay as written; every test undoes its rows, and the state between
 * tests is checked clean (strict and settled).
 */
describe('invariant checker on corrupted databases', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  const undo: (() => Promise<unknown>)[] = [];
  const touchedGpus = new Set<string>();

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_RECONCILE_SECONDS: '3600' });
    t = await makeTenant(sys.db, 'inv-bad', { quota: { guaranteed: 64, limit: 256 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
    expect((await checkInvariants(sys.db, { settled: true })).violations).toEqual([]);
  }, 60_000);
  afterAll(async () => sys?.close());
  afterEach(async () => {
    while (undo.length) await undo.pop()!();
    for (const gpuId of touchedGpus) {
      await sys.db.gpuInstance.deleteMany({ where: { gpuId } });
      await sys.db.gpu.update({
        where: { id: gpuId },
        data: { mode: 'whole', schedulable: true, health: 'healthy', migTarget: Prisma.DbNull, migRequestedAt: null },
      });
    }
    touchedGpus.clear();
    expect((await checkInvariants(sys.db, { settled: true })).violations).toEqual([]);
  });

  const db = () => sys.db;
  let picked = 0;
  /** A GPU no other test used, of a model (touched: restored to whole and healthy afterwards). */
  async function freeGpu(model = 'H100-80GB'): Promise<Gpu> {
    const g = await db().gpu.findMany({ where: { model, migCapable: true }, orderBy: { id: 'asc' }, skip: picked++, take: 1 });
    touchedGpus.add(g[0]!.id);
    return g[0]!;
  }
  async function setMode(gpu: Gpu, mode: 'whole' | 'mig' | 'shared', slices: { profile: string; start: number; size: number }[] = []) {
    await db().gpu.update({ where: { id: gpu.id }, data: { mode } });
    if (slices.length) await db().gpuInstance.createMany({ data: slices.map((s) => ({ gpuId: gpu.id, ...s })) });
  }
  async function job(data: {
    state: Prisma.JobCreateInput['state'];
    resources: object;
    replicas?: number;
    teamId?: string;
    tenantId?: string;
    reasons?: object[];
    finishedAt?: Date | null;
    runningSince?: Date | null;
  }) {
    const running = data.state === 'running' || data.state === 'suspending';
    const row = await db().job.create({
      data: {
        tenantId: data.tenantId ?? t.tenant.id,
        teamId: data.teamId ?? t.team.id,
        name: 'fabricated',
        kind: 'training',
        state: data.state,
        replicas: data.replicas ?? 1,
        resources: data.resources,
        reasons: data.reasons ?? (data.state === 'pending' ? [{ code: 'queued', message: 'waiting' }] : []),
        startedAt: running ? new Date() : null,
        runningSince: data.runningSince !== undefined ? data.runningSince : data.state === 'running' ? new Date() : null,
        finishedAt:
          data.finishedAt !== undefined ? data.finishedAt : ['succeeded', 'failed', 'cancelled'].includes(data.state ?? 'pending') ? new Date() : null,
      },
    });
    undo.push(async () => {
      await db().allocation.deleteMany({ where: { jobId: row.id } });
      await db().job.delete({ where: { id: row.id } });
    });
    return row;
  }
  /** An allocation row as takeGpuSlots writes it (override any field to corrupt it). */
  async function alloc(owner: { jobId?: string; endpointId?: string; teamId?: string }, gpu: Gpu, over: Partial<Prisma.AllocationUncheckedCreateInput> = {}) {
    const migProfile = over.migProfile ?? null;
    const milli = over.milli ?? 1000;
    const slot = migProfile ? `${gpu.id}:mig:${over.migStart}` : milli >= 1000 ? `${gpu.id}:whole` : null;
    const row = await db().allocation.create({
      data: {
        tenantId: t.tenant.id,
        teamId: owner.teamId ?? t.team.id,
        jobId: owner.jobId ?? null,
        endpointId: owner.endpointId ?? null,
        replica: 0,
        nodeId: gpu.nodeId,
        gpuId: gpu.id,
        gpuModel: gpu.model,
        milli,
        gpuUnits: milli / 1000,
        activeSlot: slot,
        ...over,
      },
    });
    undo.push(() => db().allocation.deleteMany({ where: { id: row.id } }));
    return row;
  }
  async function endpoint(replicas: { replica: number; ended?: boolean; activeKey?: string | null }[]) {
    const active = replicas.filter((r) => !r.ended).length;
    const ep = await db().endpoint.create({
      // the autoscaler finds nothing to change: as many replicas wanted as are active
      data: {
        tenantId: t.tenant.id,
        teamId: t.team.id,
        name: `ep-${Date.now()}-${picked}`,
        model: 'llama',
        resources: { gpus: 1 },
        minReplicas: active,
        maxReplicas: Math.max(1, active),
        desiredReplicas: active,
        scaleToZeroAfterSeconds: 3600,
      },
    });
    const rows = [];
    for (const r of replicas) {
      rows.push(
        await db().endpointReplica.create({
          data: {
            tenantId: t.tenant.id,
            endpointId: ep.id,
            replica: r.replica,
            state: r.ended ? 'stopped' : 'ready',
            endedAt: r.ended ? new Date() : null,
            activeKey: r.activeKey !== undefined ? r.activeKey : r.ended ? null : `${ep.id}:${r.replica}`,
          },
        }),
      );
    }
    undo.push(async () => {
      await db().allocation.deleteMany({ where: { endpointId: ep.id } });
      await db().endpointReplica.deleteMany({ where: { endpointId: ep.id } });
      await db().endpoint.delete({ where: { id: ep.id } });
    });
    return { ep, rows };
  }
  const rules = async (settled = false) => (await checkInvariants(db(), { settled })).violations.map((v) => ({ rule: v.rule, subject: v.subject }));
  const only = (rule: InvariantRule, subject: string) => [{ rule, subject }];

  it('sanity: a correct fabricated running whole, MIG and share job and an endpoint replica pass', async () => {
    const [g1, g2, g3, g4] = [await freeGpu(), await freeGpu(), await freeGpu(), await freeGpu()];
    await alloc({ jobId: (await job({ state: 'running', resources: { gpus: 1 } })).id }, g1);
    await setMode(g2, 'mig', [{ profile: '1g.10gb', start: 0, size: 1 }]);
    await alloc({ jobId: (await job({ state: 'running', resources: { migProfile: '1g.10gb' } })).id }, g2, {
      migProfile: '1g.10gb',
      migStart: 0,
      milli: 1000,
      gpuUnits: 1 / 7,
    });
    await setMode(g3, 'shared');
    await alloc({ jobId: (await job({ state: 'running', resources: { gpuFraction: 0.5 } })).id }, g3, { milli: 500 });
    const { ep } = await endpoint([{ replica: 0 }]);
    await alloc({ endpointId: ep.id }, g4);
    expect(await rules(true)).toEqual([]);
  });

  // ---- 1. slots ------------------------------------------------------------------------
  it('slot-double-booked: a second share pushes a GPU past 1000 milli', async () => {
    const gpu = await freeGpu();
    await setMode(gpu, 'shared');
    await alloc({ jobId: (await job({ state: 'running', resources: { gpuFraction: 0.6 } })).id }, gpu, { milli: 600 });
    await alloc({ jobId: (await job({ state: 'running', resources: { gpuFraction: 0.6 } })).id }, gpu, { milli: 600 });
    expect(await rules()).toEqual(only('slot-double-booked', `gpu ${gpu.id}`));
  });

  it('slot-double-booked: a whole GPU given twice (the second written without its unique slot)', async () => {
    const gpu = await freeGpu();
    await alloc({ jobId: (await job({ state: 'running', resources: { gpus: 1 } })).id }, gpu);
    const second = await alloc({ jobId: (await job({ state: 'running', resources: { gpus: 1 } })).id }, gpu, { activeSlot: null });
    expect(await rules()).toEqual([...only('slot-double-booked', `gpu ${gpu.id}:whole`), ...only('active-slot-mismatch', `allocation ${second.id}`)]);
  });

  it('slot-double-booked: one MIG slice held twice', async () => {
    const gpu = await freeGpu();
    await setMode(gpu, 'mig', [{ profile: '1g.10gb', start: 3, size: 1 }]);
    const mig = { migProfile: '1g.10gb', migStart: 3, gpuUnits: 1 / 7 };
    await alloc({ jobId: (await job({ state: 'running', resources: { migProfile: '1g.10gb' } })).id }, gpu, mig);
    const second = await alloc({ jobId: (await job({ state: 'running', resources: { migProfile: '1g.10gb' } })).id }, gpu, {
      ...mig,
      activeSlot: `${gpu.id}:mig:3:dup`,
    });
    expect(await rules()).toEqual([...only('slot-double-booked', `gpu ${gpu.id}:mig:3`), ...only('active-slot-mismatch', `allocation ${second.id}`)]);
  });

  it('allocation-mode-mismatch: a shared GPU reset to whole under its shares', async () => {
    const gpu = await freeGpu();
    await setMode(gpu, 'shared');
    const a = await alloc({ jobId: (await job({ state: 'running', resources: { gpuFraction: 0.5 } })).id }, gpu, { milli: 500 });
    await setMode(gpu, 'whole');
    expect(await rules()).toEqual(only('allocation-mode-mismatch', `allocation ${a.id}`));
  });

  // ---- 2-3. MIG --------------------------------------------------------------------------
  it('mig-instance-missing: a MIG allocation whose slice was destroyed', async () => {
    const gpu = await freeGpu();
    await setMode(gpu, 'mig', [
      { profile: '1g.10gb', start: 0, size: 1 },
      { profile: '1g.10gb', start: 1, size: 1 },
    ]);
    await alloc({ jobId: (await job({ state: 'running', resources: { migProfile: '1g.10gb' } })).id }, gpu, {
      migProfile: '1g.10gb',
      migStart: 1,
      gpuUnits: 1 / 7,
    });
    await db().gpuInstance.deleteMany({ where: { gpuId: gpu.id, start: 1 } });
    expect(await rules()).toEqual(only('mig-instance-missing', `gpu ${gpu.id}:mig:1`));
  });

  it('mig-layout-invalid: overlapping GPU instances', async () => {
    const gpu = await freeGpu();
    await setMode(gpu, 'mig', [
      { profile: '3g.40gb', start: 0, size: 4 },
      { profile: '2g.20gb', start: 2, size: 2 },
    ]);
    expect(await rules()).toEqual(only('mig-layout-invalid', `gpu ${gpu.id}`));
  });

  it('gpu-mode-instances-mismatch: slices left on a GPU back in whole mode, and a mig GPU without slices', async () => {
    const [a, b] = [await freeGpu(), await freeGpu()];
    await setMode(a, 'whole', [{ profile: '7g.80gb', start: 0, size: 8 }]);
    await setMode(b, 'mig');
    const got = await rules();
    expect(got).toHaveLength(2);
    expect(got).toEqual(expect.arrayContaining([...only('gpu-mode-instances-mismatch', `gpu ${a.id}`), ...only('gpu-mode-instances-mismatch', `gpu ${b.id}`)]));
  });

  // ---- 4. activeSlot -----------------------------------------------------------------------
  it('active-slot-mismatch: an active whole allocation without its slot key, and a released one keeping it', async () => {
    const [a, b] = [await freeGpu(), await freeGpu()];
    const held = await alloc({ jobId: (await job({ state: 'running', resources: { gpus: 1 } })).id }, a, { activeSlot: null });
    const released = await alloc({ jobId: (await job({ state: 'succeeded', resources: { gpus: 1 } })).id }, b, { endedAt: new Date() });
    const got = await rules();
    expect(got).toHaveLength(2);
    expect(got).toEqual(
      expect.arrayContaining([...only('active-slot-mismatch', `allocation ${held.id}`), ...only('active-slot-mismatch', `allocation ${released.id}`)]),
    );
  });

  // ---- 5. quotas ---------------------------------------------------------------------------
  it('team-over-quota: a team above its limit by work admitted after the limit was set', async () => {
    const small = await makeTenant(db(), `inv-quota-${Date.now()}`, { quota: { guaranteed: 1, limit: 1 } });
    undo.push(async () => {
      await db().apiKey.deleteMany({ where: { teamId: small.team.id } });
      await db().quota.deleteMany({ where: { teamId: small.team.id } });
      await db().team.delete({ where: { id: small.team.id } });
      await db().tenant.delete({ where: { id: small.tenant.id } });
    });
    await new Promise((r) => setTimeout(r, 5));
    for (let i = 0; i < 2; i++) {
      const gpu = await freeGpu();
      const j = await job({ state: 'running', resources: { gpus: 1 }, teamId: small.team.id, tenantId: small.tenant.id });
      await alloc({ jobId: j.id, teamId: small.team.id }, gpu, { tenantId: small.tenant.id });
    }
    expect(await rules()).toEqual(only('team-over-quota', `team ${small.team.id}:*`));

    // an admin lowering the limit below what runs is allowed: no violation for that work
    await db().quota.update({ where: { teamId_gpuModel: { teamId: small.team.id, gpuModel: '*' } }, data: { limit: 0.5, guaranteed: 0.5 } });
    expect(await rules()).toEqual([]);
  });

  // ---- 6. holders ----------------------------------------------------------------------------
  it('allocation-orphaned: an allocation of a succeeded job, and one of a stopped endpoint replica', async () => {
    const [a, b] = [await freeGpu(), await freeGpu()];
    const leaked = await alloc({ jobId: (await job({ state: 'succeeded', resources: { gpus: 1 } })).id }, a);
    const { ep } = await endpoint([{ replica: 0 }, { replica: 1, ended: true }]);
    await alloc({ endpointId: ep.id }, await freeGpu());
    const stale = await alloc({ endpointId: ep.id }, b, { replica: 1 });
    const got = await rules();
    expect(got).toHaveLength(2);
    expect(got).toEqual(
      expect.arrayContaining([...only('allocation-orphaned', `allocation ${leaked.id}`), ...only('allocation-orphaned', `allocation ${stale.id}`)]),
    );
  });

  // ---- 7. jobs ---------------------------------------------------------------------------------
  it('idle-job-holds-gpus: a job back in pending that still holds its GPU', async () => {
    const j = await job({ state: 'pending', resources: { gpus: 1 } });
    await alloc({ jobId: j.id }, await freeGpu());
    expect(await rules()).toEqual(only('idle-job-holds-gpus', `job ${j.id}`));
  });

  it('job-allocations-incomplete: a running gang missing one GPU of its second replica', async () => {
    const j = await job({ state: 'running', replicas: 2, resources: { gpus: 2 } });
    await alloc({ jobId: j.id }, await freeGpu());
    await alloc({ jobId: j.id }, await freeGpu());
    await alloc({ jobId: j.id }, await freeGpu(), { replica: 1 });
    expect(await rules()).toEqual(only('job-allocations-incomplete', `job ${j.id}`));
  });

  it('job-fields-inconsistent: a finished job without finishedAt, a running one without runningSince', async () => {
    const done = await job({ state: 'failed', resources: { gpus: 1 }, finishedAt: null });
    const run = await job({ state: 'running', resources: { gpus: 1 }, runningSince: null });
    await alloc({ jobId: run.id }, await freeGpu());
    const got = await rules();
    expect(got).toHaveLength(2);
    expect(got).toEqual(expect.arrayContaining([...only('job-fields-inconsistent', `job ${done.id}`), ...only('job-fields-inconsistent', `job ${run.id}`)]));
  });

  // ---- 8. endpoint replicas --------------------------------------------------------------------
  it('replica-allocations-incomplete: an active replica without its GPU', async () => {
    const { ep } = await endpoint([{ replica: 0 }]);
    expect(await rules()).toEqual(only('replica-allocations-incomplete', `endpoint ${ep.id}:replica:0`));
  });

  it('replica-active-key-mismatch: a stopped replica keeping its key', async () => {
    const { ep } = await endpoint([{ replica: 2, ended: true, activeKey: 'x' }]);
    expect(await rules()).toEqual(only('replica-active-key-mismatch', `endpoint ${ep.id}:replica:2`));
  });

  // ---- settled -----------------------------------------------------------------------------------
  it('settled only: a GPU out of scheduling with no MIG change, and a MIG change requested long ago', async () => {
    const [a, b] = [await freeGpu(), await freeGpu()];
    await db().gpu.update({ where: { id: a.id }, data: { schedulable: false } });
    await db().gpu.update({ where: { id: b.id }, data: { schedulable: false, migTarget: [], migRequestedAt: new Date(Date.now() - 120_000) } });
    expect(await rules()).toEqual([]);
    const got = await rules(true);
    expect(got).toHaveLength(2);
    expect(got).toEqual(expect.arrayContaining([...only('gpu-mig-change-stuck', `gpu ${a.id}`), ...only('gpu-mig-change-stuck', `gpu ${b.id}`)]));
  });

  it('settled only: a job stuck in starting, and a pending job with no reason', async () => {
    const stuck = await job({ state: 'starting', resources: { gpus: 1 } });
    await alloc({ jobId: stuck.id }, await freeGpu());
    const silent = await job({ state: 'pending', resources: { gpus: 1 }, reasons: [] });
    expect(await rules()).toEqual([]);
    const got = await rules(true);
    expect(got).toHaveLength(2);
    expect(got).toEqual(
      expect.arrayContaining([...only('job-stuck-in-transition', `job ${stuck.id}`), ...only('pending-job-unexplained', `job ${silent.id}`)]),
    );
  });

  it('settled only: a node switching past its ETA, and work left on a down node and an unhealthy GPU', async () => {
    const [a, b] = [await freeGpu(), await freeGpu('A100-80GB')];
    const onA = await alloc({ jobId: (await job({ state: 'running', resources: { gpus: 1 } })).id }, a);
    const onB = await alloc({ jobId: (await job({ state: 'running', resources: { gpus: 1 } })).id }, b);
    const switching = await db().node.findFirstOrThrow({ where: { id: { notIn: [a.nodeId, b.nodeId] }, allocations: { none: { endedAt: null } } } });
    const restore = (id: string) => () => db().node.update({ where: { id }, data: { state: 'ready', transitionEtaAt: null, transitionStartedAt: null } });
    await db().node.update({
      where: { id: switching.id },
      data: { state: 'switching', transitionStartedAt: new Date(Date.now() - 300_000), transitionEtaAt: new Date(Date.now() - 60_000) },
    });
    undo.push(restore(switching.id));
    await db().node.update({ where: { id: b.nodeId }, data: { state: 'down' } });
    undo.push(restore(b.nodeId));
    await db().gpu.update({ where: { id: a.id }, data: { health: 'unhealthy' } });
    expect(await rules()).toEqual([]);
    const got = await rules(true);
    expect(got).toHaveLength(3);
    expect(got).toEqual(
      expect.arrayContaining([
        ...only('node-transition-stuck', `node ${switching.id}`),
        ...only('allocation-on-failed-hardware', `allocation ${onA.id}`),
        ...only('allocation-on-failed-hardware', `allocation ${onB.id}`),
      ]),
    );
  });
});
