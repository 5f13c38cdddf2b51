import type { SimulatedDriver } from '@gantry/driver';
import { CLUSTER_DRIVER } from './driver/driver.provider';
import { EventsFeedRepository } from './modules/events/events-feed.repository';
import { toLive } from './modules/events/events.publisher';
import { visibleTo } from './modules/events/events-stream.service';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/**
 * Bare-metal leases on the simulated cluster (docs/bare-metal.md): whole nodes provisioned with an
 * image, their GPUs counted against the team's quota and out of the container pool, suspended
 * (powered off, kept), resumed, released (wiped, back to the pool); queued leases take idle nodes
 * ahead of the rest of their set.
 */
describe('bare-metal leases (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let other: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    // 200x: a provisioning (300 simulated s) takes 1.5 s, a wipe 0.9 s.
    sys = await startSystem({ GANTRY_SIM_SPEED: '200' });
    t = await makeTenant(sys.db, 'bare-metal-int', { quota: { guaranteed: 16, limit: 24 } });
    other = await makeTenant(sys.db, 'bare-metal-other', { quota: { guaranteed: 128, limit: 128 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  }, 120_000);
  afterAll(async () => sys?.close());

  const http = () => sys.http();
  const post = (path: string, body: object = {}, auth = t.auth) => http().post(path).set('Authorization', auth).send(body);
  const get = async (id: string, auth = t.auth) => (await http().get(`/v1/bare-metal/leases/${id}`).set('Authorization', auth)).body;
  const inState = (id: string, want: string, ms = 60_000) => eventually(async () => ((await get(id)).state === want ? get(id) : undefined), ms);
  const simulated = () => sys.worker.get<SimulatedDriver>(CLUSTER_DRIVER);
  const teamGpusHeld = async (teamId: string) =>
    Number((await sys.db.allocation.aggregate({ where: { teamId, endedAt: null }, _sum: { gpuUnits: true } }))._sum.gpuUnits ?? 0);
  const lease = (body: object) => ({ teamId: t.team.id, name: 'bm', gpuModel: 'H100-80GB', count: 1, image: 'ubuntu-22.04-cuda-12.4', ...body });

  it.each([
    ['a GPU model no node has', { gpuModel: 'Z999' }, 'gpuModel'],
    ['more nodes than the cluster has', { count: 17 }, 'count'],
    ['a set under one leaf larger than any leaf', { count: 5, sameLeaf: true }, 'count'],
    ['no image', { image: '' }, 'image'],
  ])('refuses %s with 400 naming the field', async (_n, body, field) => {
    const res = await post('/v1/bare-metal/leases', lease(body));
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('refuses a lease larger than the team quota with 409 naming count', async () => {
    // 4 nodes x 8 GPUs = 32 > the team's limit of 24.
    const res = await post('/v1/bare-metal/leases', lease({ count: 4 }));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('quota_exceeded');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual(['count']);
  });

  it('provisions, suspends, resumes and releases a node; its GPUs count against the quota and leave the pool meanwhile', async () => {
    const created = await post('/v1/bare-metal/leases', lease({ name: 'db-hosts' }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ state: 'pending', count: 1, gpuModel: 'H100-80GB', image: 'ubuntu-22.04-cuda-12.4' });
    const id = created.body.id as string;

    const deployed = await inState(id, 'deployed');
    expect(deployed.nodes).toHaveLength(1);
    expect(deployed.nodes[0]).toMatchObject({ state: 'deployed', gpus: 8 });
    expect(deployed.gpusHeld).toBe(8);
    expect(deployed.deployedAt).not.toBeNull();
    const nodeName = deployed.nodes[0].name as string;
    expect(simulated().bareMetalStatus().get(nodeName)).toBe('deployed');
    expect(await teamGpusHeld(t.team.id)).toBe(8);

    // Out of the container pool: a job of another tenant that wants every H100 GPU cannot start
    // (15 free nodes of 16), and none of its replicas lands on the bare-metal node.
    const job = (
      await post(
        '/v1/jobs',
        {
          teamId: other.team.id,
          name: 'fill',
          kind: 'training',
          replicas: 16,
          resources: { gpus: 8, gpuModel: 'H100-80GB' },
          simulation: { durationSeconds: 5000 },
        },
        other.auth,
      )
    ).body;
    await eventually(async () => {
      const j = (await http().get(`/v1/jobs/${job.id}`).set('Authorization', other.auth)).body;
      return j.state === 'pending' && j.reasons?.length > 0;
    });
    expect(await sys.db.allocation.count({ where: { jobId: job.id, endedAt: null } })).toBe(0);
    expect((await post(`/v1/jobs/${job.id}/cancel`, {}, other.auth)).status).toBe(200);

    const suspending = await post(`/v1/bare-metal/leases/${id}/suspend`);
    expect(suspending.status).toBe(200);
    expect(suspending.body.state).toBe('suspending');
    const suspended = await inState(id, 'suspended');
    expect(suspended.nodes[0]).toMatchObject({ name: nodeName, state: 'powered-off' });
    expect(simulated().bareMetalStatus().get(nodeName)).toBe('powered-off');
    // The team keeps the node (and its quota use) while suspended.
    expect(await teamGpusHeld(t.team.id)).toBe(8);
    expect((await post(`/v1/bare-metal/leases/${id}/suspend`)).status).toBe(409);

    expect((await post(`/v1/bare-metal/leases/${id}/resume`)).body.state).toBe('resuming');
    await inState(id, 'deployed');
    expect(simulated().bareMetalStatus().get(nodeName)).toBe('deployed');

    expect((await post(`/v1/bare-metal/leases/${id}/release`)).body.state).toBe('releasing');
    const released = await inState(id, 'released');
    expect(released.nodes).toEqual([]);
    expect(released.gpusHeld).toBe(0);
    expect(released.releasedAt).not.toBeNull();
    expect(simulated().bareMetalStatus().has(nodeName)).toBe(false);
    expect(await teamGpusHeld(t.team.id)).toBe(0);
    const node = await sys.db.node.findUniqueOrThrow({ where: { name: nodeName } });
    expect(node).toMatchObject({ bareMetalLeaseId: null, bareMetalState: null });
    expect((await post(`/v1/bare-metal/leases/${id}/release`)).status).toBe(409);
  }, 180_000);

  it('writes each lease state and node step as an event on the lease and on the node; the node shows a bare-metal badge', async () => {
    const id = (await post('/v1/bare-metal/leases', lease({ name: 'audited' }))).body.id as string;
    const deployed = await inState(id, 'deployed');
    const nodeName = deployed.nodes[0].name as string;
    const nodeAs = async (auth: string) => (await http().get(`/v1/nodes/${nodeName}`).set('Authorization', auth)).body;

    // The Cluster page's badge: the holder sees the lease and its team, another tenant only "bare metal".
    expect((await nodeAs(t.auth)).bareMetal).toEqual({ state: 'deployed', leaseId: id, leaseName: 'audited', teamId: t.team.id });
    expect((await nodeAs(other.auth)).bareMetal).toEqual({ state: 'deployed' });
    const listed = (await http().get('/v1/nodes?limit=500').set('Authorization', other.auth)).body.items.find((n: { name: string }) => n.name === nodeName);
    expect(listed.bareMetal).toEqual({ state: 'deployed' });

    await post(`/v1/bare-metal/leases/${id}/suspend`);
    await inState(id, 'suspended');
    await post(`/v1/bare-metal/leases/${id}/resume`);
    await inState(id, 'deployed');
    await post(`/v1/bare-metal/leases/${id}/release`);
    const released = await inState(id, 'released');
    expect((await nodeAs(t.auth)).bareMetal).toBeNull();

    const nodeEvent = (step: string) => ({ type: `node.bare-metal.${step}`, nodeId: deployed.nodes[0].id });
    expect(released.events.map((e: { type: string; nodeId: string | null }) => ({ type: e.type, nodeId: e.nodeId }))).toEqual([
      { type: 'bare-metal.requested', nodeId: null },
      nodeEvent('provisioning'),
      { type: 'bare-metal.provisioning', nodeId: null },
      nodeEvent('deployed'),
      { type: 'bare-metal.deployed', nodeId: null },
      { type: 'bare-metal.suspending', nodeId: null },
      nodeEvent('powering-off'),
      nodeEvent('powered-off'),
      { type: 'bare-metal.suspended', nodeId: null },
      { type: 'bare-metal.resuming', nodeId: null },
      nodeEvent('powering-on'),
      nodeEvent('deployed'),
      { type: 'bare-metal.deployed', nodeId: null },
      { type: 'bare-metal.releasing', nodeId: null },
      nodeEvent('deprovisioning'),
      nodeEvent('returned'),
      { type: 'bare-metal.released', nodeId: null },
    ]);
    expect(released.events[1].message).toBe(`node ${nodeName} held by bare-metal lease "audited": writing image ubuntu-22.04-cuda-12.4`);

    // On the node's timeline too, for the holder only.
    // (this lease's: the node may have been leased before in this file)
    const mine = (await nodeAs(t.auth)).events.filter(
      (e: { type: string; createdAt: string }) => e.type.startsWith('node.bare-metal.') && e.createdAt >= released.createdAt,
    );
    expect(mine.map((e: { type: string }) => e.type)).toEqual([
      'node.bare-metal.provisioning',
      'node.bare-metal.deployed',
      'node.bare-metal.powering-off',
      'node.bare-metal.powered-off',
      'node.bare-metal.powering-on',
      'node.bare-metal.deployed',
      'node.bare-metal.deprovisioning',
      'node.bare-metal.returned',
    ]);
    expect((await nodeAs(other.auth)).events.filter((e: { type: string }) => e.type.startsWith('node.bare-metal.'))).toEqual([]);

    // The live feed carries the lease's team, so a team-bound stream sees them and another team's does not.
    const feed = await sys.worker.get(EventsFeedRepository).since({ createdAt: new Date(Date.parse(released.createdAt) - 1) }, 500);
    const live = feed.filter((e) => released.events.some((x: { id: string }) => x.id === e.id)).map(toLive);
    expect(live).toHaveLength(17);
    const teamA = { kind: 'tenant' as const, tenantId: t.tenant.id, teamId: t.team.id };
    expect(live.every((e) => e.teamId === t.team.id && visibleTo(teamA, e))).toBe(true);
    expect(live.some((e) => visibleTo({ kind: 'tenant', tenantId: t.tenant.id, teamId: 'another-team' }, e))).toBe(false);
    expect(live.some((e) => visibleTo({ kind: 'tenant', tenantId: other.tenant.id, teamId: null }, e))).toBe(false);
  }, 180_000);

  it('another tenant sees none of it: 404 on read, suspend, resume and release; its list is empty', async () => {
    const created = await post('/v1/bare-metal/leases', lease({ name: 'private', gpuModel: 'A100-80GB' }));
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await http().get(`/v1/bare-metal/leases/${id}`).set('Authorization', other.auth)).status).toBe(404);
    for (const action of ['suspend', 'resume', 'release']) expect((await post(`/v1/bare-metal/leases/${id}/${action}`, {}, other.auth)).status).toBe(404);
    const list = await http().get('/v1/bare-metal/leases').set('Authorization', other.auth);
    expect(list.body.items.map((l: { id: string }) => l.id)).not.toContain(id);
    // Nor may it request a lease for the first tenant's team.
    expect((await post('/v1/bare-metal/leases', lease({ name: 'steal' }), other.auth)).status).toBe(404);
    expect((await get(id)).state).not.toBe('releasing');
    await post(`/v1/bare-metal/leases/${id}/release`);
    await inState(id, 'released');
  }, 120_000);

  it('look-ahead: a queued lease provisions each node as it goes idle, before its whole set is free', async () => {
    // Another tenant's job holds 15 of the 16 H100 nodes.
    const job = (
      await post(
        '/v1/jobs',
        {
          teamId: other.team.id,
          name: 'busy',
          kind: 'training',
          replicas: 15,
          resources: { gpus: 8, gpuModel: 'H100-80GB' },
          simulation: { durationSeconds: 50000 },
        },
        other.auth,
      )
    ).body;
    await eventually(async () => (await http().get(`/v1/jobs/${job.id}`).set('Authorization', other.auth)).body.state === 'running');

    const id = (await post('/v1/bare-metal/leases', lease({ name: 'pair', count: 2 }))).body.id as string;
    // The one idle node is taken and provisioned at once; the lease waits for the second.
    const partial = await eventually(async () => {
      const l = await get(id);
      return l.nodes.length === 1 && l.nodes[0].state === 'deployed' ? l : undefined;
    });
    expect(partial.state).toBe('pending');
    expect(partial.stateReason).toMatch(/waiting for idle H100-80GB nodes \(1 of 2 held/);
    expect(partial.gpusHeld).toBe(8);

    // A container job that fits only that node's GPUs stays pending: the node is out of the pool.
    const small = (
      await post(
        '/v1/jobs',
        { teamId: other.team.id, name: 'small', kind: 'training', resources: { gpus: 8, gpuModel: 'H100-80GB' }, simulation: { durationSeconds: 5000 } },
        other.auth,
      )
    ).body;
    await eventually(async () => {
      const j = (await http().get(`/v1/jobs/${small.id}`).set('Authorization', other.auth)).body;
      return j.state === 'pending' && j.reasons?.length > 0;
    });
    expect((await post(`/v1/jobs/${small.id}/cancel`, {}, other.auth)).status).toBe(200);

    // The busy job ends: the lease takes a freed node and is deployed.
    expect((await post(`/v1/jobs/${job.id}/cancel`, {}, other.auth)).status).toBe(200);
    const full = await inState(id, 'deployed');
    expect(full.nodes).toHaveLength(2);
    expect(full.gpusHeld).toBe(16);
    await post(`/v1/bare-metal/leases/${id}/release`);
    await inState(id, 'released');
  }, 180_000);

  it('takes a node with a MIG layout when no work holds it, and clears the layout (whole GPUs) before writing the image', async () => {
    const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
    const [busy, idle] = await sys.db.node.findMany({
      where: { bareMetalLeaseId: null, gpus: { some: { model: 'A100-80GB' }, every: { model: 'A100-80GB' } } },
      include: { gpus: { orderBy: { index: 'asc' } } },
      orderBy: { name: 'asc' },
      take: 2,
    });
    const migOn = async (gpuId: string) => {
      expect(
        (
          await http()
            .put(`/v1/gpus/${gpuId}/mig`)
            .set('Authorization', admin)
            .send({ layout: [{ profile: '1g.10gb', start: 0 }] })
        ).status,
      ).toBe(202);
      await eventually(async () => {
        const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpuId } });
        return g.mode === 'mig' && g.schedulable;
      });
    };
    // The first node's slice runs another tenant's job: that node is not idle and keeps its layout.
    await migOn(busy!.gpus[0]!.id);
    const job = (
      await post(
        '/v1/jobs',
        {
          teamId: other.team.id,
          name: 'slice',
          kind: 'training',
          resources: { migProfile: '1g.10gb', gpuModel: 'A100-80GB' },
          simulation: { durationSeconds: 50000 },
        },
        other.auth,
      )
    ).body;
    await eventually(async () => (await sys.db.allocation.count({ where: { jobId: job.id, gpuId: busy!.gpus[0]!.id, endedAt: null } })) === 1);
    await migOn(idle!.gpus[0]!.id);
    expect((await simulated().discover()).nodes.find((n) => n.name === idle!.name)!.gpus[0]!.migLayout).toHaveLength(1);

    const id = (await post('/v1/bare-metal/leases', lease({ name: 'mig-host', gpuModel: 'A100-80GB' }))).body.id as string;
    const deployed = await inState(id, 'deployed');
    expect(deployed.nodes.map((n: { name: string }) => n.name)).toEqual([idle!.name]);
    expect(deployed.events[1].message).toMatch(/MIG layout cleared on 1 GPU\(s\)/);
    const gpu = await sys.db.gpu.findUniqueOrThrow({ where: { id: idle!.gpus[0]!.id }, include: { instances: true } });
    expect(gpu).toMatchObject({ mode: 'whole', instances: [] });
    expect((await simulated().discover()).nodes.find((n) => n.name === idle!.name)!.gpus[0]!.migLayout ?? []).toEqual([]);
    // The busy node keeps its slice and its job.
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: busy!.gpus[0]!.id } })).mode).toBe('mig');
    expect(await sys.db.allocation.count({ where: { jobId: job.id, endedAt: null } })).toBe(1);

    expect((await post(`/v1/jobs/${job.id}/cancel`, {}, other.auth)).status).toBe(200);
    await post(`/v1/bare-metal/leases/${id}/release`);
    await inState(id, 'released');
  }, 180_000);
});
