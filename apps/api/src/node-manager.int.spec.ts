import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';

/** Operator actions, the MIG manager and persona switches end to end on the simulated cluster (speed 50). */
describe('node manager (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem();
    acme = await makeTenant(sys.db, 'acme-nodes', { quota: { guaranteed: 64, limit: 256 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const submit = async (body: object) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', acme.auth)
      .send({ teamId: acme.team.id, kind: 'batch', ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const getJob = async (id: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', acme.auth)).body;
  const state = (id: string, want: string, ms = 20_000) =>
    eventually(async () => {
      const j = await getJob(id);
      return j.state === want ? j : undefined;
    }, ms);
  const node = async (id: string) => (await sys.http().get(`/v1/nodes/${id}`).set('Authorization', admin)).body;

  it('cordon, uncordon and drain need cluster:admin; a drain checkpoints and moves the jobs, then the node stays cordoned', async () => {
    const id = await submit({ name: 'drained', resources: { gpus: 2, gpuModel: 'A100-80GB' }, simulation: { durationSeconds: 300 } });
    const run = await state(id, 'running');
    const nodeId = run.placement[0].nodeId as string;
    expect((await sys.http().post(`/v1/nodes/${nodeId}/cordon`).set('Authorization', acme.auth).send({})).status).toBe(403);

    const cordon = await sys.http().post(`/v1/nodes/${nodeId}/cordon`).set('Authorization', admin).send({ reason: 'maintenance' });
    expect(cordon.status).toBe(200);
    expect(cordon.body).toMatchObject({ state: 'cordoned', stateReason: expect.stringMatching(/maintenance/) });
    expect((await getJob(id)).state).toBe('running'); // cordon keeps running work

    const drain = await sys.http().post(`/v1/nodes/${nodeId}/drain`).set('Authorization', admin).send({});
    expect(drain.status).toBe(202);
    expect(drain.body.state).toBe('draining');
    const moved = await eventually(async () => {
      const j = await getJob(id);
      return j.state === 'running' && j.placement[0].nodeId !== nodeId ? j : undefined;
    }, 30_000);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    const resched = moved.events.find((e: { type: string }) => e.type === 'job.rescheduled');
    expect(resched.message).toMatch(/drained.*checkpoint/);
    await eventually(async () => (await node(nodeId)).state === 'cordoned', 30_000);
    expect((await node(nodeId)).stateReason).toMatch(/^drained/);

    const un = await sys.http().post(`/v1/nodes/${nodeId}/uncordon`).set('Authorization', admin).send({});
    expect(un.status).toBe(200);
    expect(un.body.state).toBe('ready');
    await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', acme.auth);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('refuses an invalid MIG layout with a 400 naming the broken rule', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'H100-80GB' }, orderBy: { id: 'desc' } });
    const put = (layout: object[]) => sys.http().put(`/v1/gpus/${gpu.id}/mig`).set('Authorization', admin).send({ layout });
    const illegal = await put([{ profile: '3g.40gb', start: 2 }]);
    expect(illegal.status).toBe(400);
    expect(illegal.body.error.message).toMatch(/illegal_start/);
    const overlap = await put([
      { profile: '4g.40gb', start: 0 },
      { profile: '2g.20gb', start: 2 },
    ]);
    expect(overlap.status).toBe(400);
    expect(overlap.body.error.details[0].problem).toMatch(/^overlap/);
    expect((await put([{ profile: '5g.50gb', start: 0 }])).body.error.message).toMatch(/unknown_profile/);
    expect((await sys.http().put(`/v1/gpus/${gpu.id}/mig`).set('Authorization', acme.auth).send({ layout: [] })).status).toBe(403);
  });

  it('re-partitions MIG on demand without ever killing a running slice, and a manual change waits for idle slices', async () => {
    // one H100 GPU in MIG mode with a 1g slice, taken by a job
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'H100-80GB', allocations: { none: { endedAt: null } } }, orderBy: { id: 'asc' } });
    const res = await sys
      .http()
      .put(`/v1/gpus/${gpu.id}/mig`)
      .set('Authorization', admin)
      .send({ layout: [{ profile: '1g.10gb', start: 0 }] });
    expect(res.status).toBe(202);
    expect(res.body.state).toBe('applying');
    await eventually(async () => {
      const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } });
      return g.mode === 'mig' && g.schedulable;
    });
    const small = await submit({ name: 'mig-small', resources: { migProfile: '1g.10gb', gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 500 } });
    const smallRun = await state(small, 'running');
    expect(smallRun.placement[0].gpus[0]).toMatchObject({ gpuId: gpu.id, migProfile: '1g.10gb', migStart: 0 });

    // demand for two 3g slices: the planner creates one beside the running 1g and partitions an idle GPU
    // (the layout is made old enough to pass the planner's hysteresis)
    await sys.db.gpu.update({ where: { id: gpu.id }, data: { migChangedAt: new Date(Date.now() - 3_600_000) } });
    const big = [
      await submit({ name: 'mig-big-1', resources: { migProfile: '3g.40gb', gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 150 } }),
      await submit({ name: 'mig-big-2', resources: { migProfile: '3g.40gb', gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 150 } }),
    ];
    for (const id of big) await state(id, 'running', 30_000);
    const layout = await sys.db.gpuInstance.findMany({ where: { gpuId: gpu.id }, orderBy: { start: 'asc' } });
    expect(layout.map((i) => `${i.profile}@${i.start}`)).toEqual(['1g.10gb@0', '3g.40gb@4']);
    const applied = await sys.db.event.findMany({ where: { type: 'gpu.mig.applied' } });
    expect(applied.length).toBeGreaterThanOrEqual(3);

    // a manual change that destroys the busy slice waits: the GPU leaves scheduling, the jobs keep running
    const off = await sys.http().put(`/v1/gpus/${gpu.id}/mig`).set('Authorization', admin).send({ layout: [] });
    expect(off.status).toBe(202);
    const g = (await sys.http().get(`/v1/nodes/${gpu.nodeId}`).set('Authorization', admin)).body.gpus.find((x: { id: string }) => x.id === gpu.id);
    expect(g).toMatchObject({ schedulable: false, migTarget: [], mode: 'mig' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getJob(small)).state).toBe('running');
    expect((await checkInvariants(sys.db)).violations).toEqual([]);

    // the small job never restarted; when the slices are idle, the GPU goes back to full size
    const done = await state(small, 'succeeded', 30_000);
    expect(done.events.filter((e: { type: string }) => e.type === 'job.rescheduled')).toHaveLength(0);
    for (const id of big) expect((await state(id, 'succeeded', 30_000)).events.some((e: { type: string }) => e.type === 'job.rescheduled')).toBe(false);
    await eventually(async () => {
      const x = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } });
      return x.mode === 'whole' && x.schedulable && x.migTarget === null;
    }, 20_000);
    // the GPU the planner partitioned goes back to full size too (integration specs share one database)
    for (const other of await sys.db.gpu.findMany({ where: { mode: 'mig' } })) {
      expect((await sys.http().put(`/v1/gpus/${other.id}/mig`).set('Authorization', admin).send({ layout: [] })).status).toBe(202);
    }
    await eventually(async () => (await sys.db.gpu.count({ where: { OR: [{ mode: 'mig' }, { schedulable: false }] } })) === 0, 20_000);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('switches an idle node to vm-passthrough for a pending VM job, shows progress, then gives it back', async () => {
    const id = await submit({ name: 'vm-1', kind: 'vm', resources: { gpus: 8, gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 100 } });
    const switching = await eventually(async () => {
      const list = (await sys.http().get('/v1/nodes?state=switching').set('Authorization', admin)).body.items;
      return list.find((n: { personaTarget: string }) => n.personaTarget === 'vm-passthrough');
    }, 15_000);
    expect(switching.transition).toMatchObject({ kind: 'persona-switch', persona: 'vm-passthrough' });
    expect(switching.transition.etaAt).toEqual(expect.any(String));
    expect((await getJob(id)).state).toBe('pending'); // the node takes no work while switching
    expect((await checkInvariants(sys.db)).violations).toEqual([]);

    const run = await state(id, 'running', 30_000);
    expect(run.placement[0].nodeId).toBe(switching.id);
    const n = await node(switching.id);
    expect(n).toMatchObject({ persona: 'vm-passthrough', state: 'ready', transition: null });
    await state(id, 'succeeded', 30_000);
    // no VM demand left: after the hold time the idle node goes back to containers
    await eventually(async () => (await node(switching.id)).persona === 'container' && (await node(switching.id)).state === 'ready', 40_000, 500);
    const events = await sys.db.event.findMany({ where: { nodeId: switching.id, type: 'node.persona.switched' } });
    expect(events.length).toBe(2);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('an operator switches a persona with PUT /v1/nodes/:id/persona; the topology shows it', async () => {
    const target = await sys.db.node.findFirstOrThrow({
      where: { state: 'ready', persona: 'container', allocations: { none: { endedAt: null } } },
      orderBy: { name: 'desc' },
    });
    expect((await sys.http().put(`/v1/nodes/${target.id}/persona`).set('Authorization', acme.auth).send({ persona: 'inference' })).status).toBe(403);
    const res = await sys.http().put(`/v1/nodes/${target.id}/persona`).set('Authorization', admin).send({ persona: 'inference' });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ state: 'switching', personaTarget: 'inference' });
    const conflict = await sys.http().put(`/v1/nodes/${target.id}/persona`).set('Authorization', admin).send({ persona: 'vm-passthrough' });
    expect(conflict.status).toBe(409);
    await eventually(async () => (await node(target.id)).persona === 'inference', 20_000);
    const topo = (await sys.http().get('/v1/topology').set('Authorization', acme.auth)).body;
    expect(topo.totals).toMatchObject({ spines: 2, leaves: 8, nodes: 32, gpus: 256 });
    const found = topo.spines
      .flatMap((s: { leaves: { nodes: { id: string; persona: string }[] }[] }) => s.leaves.flatMap((l) => l.nodes))
      .find((x: { id: string }) => x.id === target.id);
    expect(found.persona).toBe('inference');
    // leave the cluster as found (integration specs share one database)
    expect((await sys.http().put(`/v1/nodes/${target.id}/persona`).set('Authorization', admin).send({ persona: 'container' })).status).toBe(202);
    await eventually(async () => (await node(target.id)).persona === 'container' && (await node(target.id)).state === 'ready', 20_000);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });
});
