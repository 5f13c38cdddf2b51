import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';

/**
 * The failover loop end to end on the simulated cluster (speed 50): fault injected through the
 * API -> detection -> quarantine -> jobs rescheduled as whole gangs -> remediation -> validation
 * -> uncordon -> incident resolved with its MTTR.
 */
// Each test waits on several time-driven steps (heartbeat grace, remediation, validation): on a
// busy machine their sum can pass the usual 60 s, while each step keeps its own 30 s bound.
jest.setTimeout(150_000);

describe('failover (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    sys = await startSystem();
    acme = await makeTenant(sys.db, 'acme-failover', { quota: { guaranteed: 64, limit: 256 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const submit = async (body: object) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', acme.auth)
      .send({ teamId: acme.team.id, kind: 'training', ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const getJob = async (id: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', acme.auth)).body;
  const running = (id: string) =>
    eventually(async () => {
      const j = await getJob(id);
      return j.state === 'running' ? j : undefined;
    });
  const fault = (body: object, auth = admin) => sys.http().post('/v1/sim/faults').set('Authorization', auth).send(body);
  const incidents = async () =>
    (await sys.http().get('/v1/incidents').set('Authorization', admin)).body.items as {
      id: string;
      kind: string;
      state: string;
      scope: string;
      xid: number | null;
      nodeId: string;
      gpuIndex: number | null;
      jobIds: string[];
      timeline: { step: string }[];
      mttrSeconds: number | null;
      resolvedAt: string | null;
    }[];

  it('refuses fault injection without cluster:admin and checks the body', async () => {
    const node = await sys.db.node.findFirstOrThrow();
    expect((await fault({ nodeId: node.id, kind: 'node-down' }, acme.auth)).status).toBe(403);
    const bad = await fault({ nodeId: node.id, kind: 'xid' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/gpuIndex/);
    expect((await fault({ nodeId: 'no-such-node', kind: 'node-down' })).status).toBe(404);
  });

  it('Xid 79 on a GPU running a job: incident, GPU quarantined, job rescheduled elsewhere and finishes, incident resolved with MTTR', async () => {
    const id = await submit({ name: 'xid79', resources: { gpus: 1, gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 300 } });
    const before = await running(id);
    const { nodeId, gpus } = before.placement[0];
    const gpuIndex = gpus[0].index as number;
    const gpuId = gpus[0].gpuId as string;
    expect((await fault({ nodeId, gpuIndex, kind: 'xid', xid: 79 })).status).toBe(202);

    // quarantined, and the job moved to another GPU
    await eventually(async () => (await sys.db.gpu.findUniqueOrThrow({ where: { id: gpuId } })).health !== 'healthy' || undefined).catch(() => undefined);
    const moved = await eventually(async () => {
      const j = await getJob(id);
      return j.state === 'running' && j.placement[0].gpus[0].gpuId !== gpuId ? j : undefined;
    });
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    expect(moved.events.map((e: { type: string }) => e.type)).toContain('job.rescheduled');
    const done = await eventually(async () => {
      const j = await getJob(id);
      return ['succeeded', 'failed'].includes(j.state) ? j : undefined;
    }, 30_000);
    expect(done.state).toBe('succeeded');

    const inc = await eventually(async () => (await incidents()).find((i) => i.kind === 'xid' && i.xid === 79 && i.resolvedAt));
    expect(inc).toMatchObject({ scope: 'gpu', state: 'resolved', nodeId, gpuIndex });
    expect(inc.jobIds).toEqual([id]); // platform admin sees the job ids
    expect(inc.mttrSeconds).toBeGreaterThan(0);
    const steps = inc.timeline.map((s) => s.step);
    for (const s of ['detected', 'quarantined', 'rescheduled', 'remediating', 'validated', 'resolved']) expect(steps).toContain(s);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpuId } })).health).toBe('healthy');
    // the tenant sees its own job in the incident
    const mine = (await sys.http().get('/v1/incidents').set('Authorization', acme.auth)).body.items.find((i: { id: string }) => i.id === inc.id);
    expect(mine.jobIds).toEqual([id]);
    // the operator's Prometheus counter moved
    const metrics = (await sys.http().get('/metrics').set('Authorization', admin)).text;
    expect(Number(/^gantry_failovers_total (\d+)/m.exec(metrics)?.[1] ?? 0)).toBeGreaterThanOrEqual(1);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('an application Xid (13) restarts the job only and quarantines nothing', async () => {
    const id = await submit({ name: 'xid13', resources: { gpus: 1, gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 200 } });
    const before = await running(id);
    const { nodeId, gpus } = before.placement[0];
    expect((await fault({ nodeId, gpuIndex: gpus[0].index, kind: 'xid', xid: 13 })).status).toBe(202);
    const inc = await eventually(async () => (await incidents()).find((i) => i.xid === 13 && i.resolvedAt));
    expect(inc.scope).toBe('none');
    expect(inc.jobIds).toEqual([id]);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpus[0].gpuId } })).health).toBe('healthy');
    const node = await sys.db.node.findUniqueOrThrow({ where: { id: nodeId } });
    expect(node.state).toBe('ready');
    const done = await eventually(async () => {
      const j = await getJob(id);
      return ['succeeded', 'failed'].includes(j.state) ? j : undefined;
    }, 30_000);
    expect(done.state).toBe('succeeded');
    const rescheduled = done.events.filter((e: { type: string }) => e.type === 'job.rescheduled');
    expect(rescheduled).toHaveLength(1);
    expect(rescheduled[0].message).toMatch(/application fault/);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('node-down moves a gang as a whole, then the node is rebooted, validated and uncordoned', async () => {
    const id = await submit({ name: 'gang', replicas: 2, resources: { gpus: 8, gpuModel: 'A100-80GB' }, simulation: { durationSeconds: 300 } });
    const before = await running(id);
    const oldNodes = before.placement.map((p: { nodeId: string }) => p.nodeId) as string[];
    expect(new Set(oldNodes).size).toBe(2);
    const down = oldNodes[0]!;
    expect((await fault({ nodeId: down, kind: 'node-down' })).status).toBe(202);

    await eventually(async () => (await sys.db.node.findUniqueOrThrow({ where: { id: down } })).state === 'down');
    const moved = await eventually(async () => {
      const j = await getJob(id);
      return j.state === 'running' && j.placement.every((p: { nodeId: string }) => p.nodeId !== down) ? j : undefined;
    });
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    expect(moved.placement).toHaveLength(2);
    // the whole gang restarted together: one reschedule, every replica on fresh allocations
    expect(moved.events.filter((e: { type: string }) => e.type === 'job.rescheduled')).toHaveLength(1);
    const allocs = await sys.db.allocation.findMany({ where: { jobId: id } });
    expect(allocs.filter((a) => a.endedAt === null)).toHaveLength(16);
    expect(allocs.filter((a) => a.endedAt !== null)).toHaveLength(16);

    const inc = await eventually(async () => (await incidents()).find((i) => i.kind === 'node-down' && i.nodeId === down && i.resolvedAt), 30_000);
    expect(inc.scope).toBe('node');
    expect(inc.jobIds).toEqual([id]);
    expect(inc.timeline.map((s) => s.step)).toEqual(
      expect.arrayContaining(['detected', 'cordoned', 'rescheduled', 'remediating', 'validated', 'uncordoned', 'resolved']),
    );
    expect((await sys.db.node.findUniqueOrThrow({ where: { id: down } })).state).toBe('ready');
    const done = await eventually(async () => {
      const j = await getJob(id);
      return ['succeeded', 'failed'].includes(j.state) ? j : undefined;
    }, 30_000);
    expect(done.state).toBe('succeeded');
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('NIC down cordons the node for multi-node work: its gang moves; recovery uncordons and resolves', async () => {
    const id = await submit({
      name: 'nccl-gang',
      replicas: 2,
      resources: { gpus: 8, gpuModel: 'H100-80GB' },
      topology: { level: 'spine', required: true },
      simulation: { durationSeconds: 400 },
    });
    const before = await running(id);
    const nodeId = before.placement[0].nodeId as string;
    expect((await fault({ nodeId, kind: 'nic-down' })).status).toBe(202);
    const moved = await eventually(async () => {
      const j = await getJob(id);
      return j.state === 'running' && j.placement.every((p: { nodeId: string }) => p.nodeId !== nodeId) ? j : undefined;
    });
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    expect(moved.events.find((e: { type: string }) => e.type === 'job.rescheduled').message).toMatch(/network/);
    const node = await sys.db.node.findUniqueOrThrow({ where: { id: nodeId } });
    expect(node).toMatchObject({ state: 'cordoned' });
    expect(node.stateReason).toMatch(/NIC down/);

    expect((await fault({ nodeId, kind: 'recover' })).status).toBe(202);
    const inc = await eventually(async () => (await incidents()).find((i) => i.kind === 'nic-down' && i.nodeId === nodeId && i.resolvedAt));
    expect(inc.jobIds).toEqual([id]);
    expect(inc.timeline.map((s) => s.step)).toEqual(expect.arrayContaining(['detected', 'cordoned', 'rescheduled', 'validated', 'uncordoned', 'resolved']));
    expect((await sys.db.node.findUniqueOrThrow({ where: { id: nodeId } })).state).toBe('ready');
    await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', acme.auth);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });
});
