import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';
import { SchedulingRepository } from './modules/scheduling/scheduling.repository';

/**
 * Power management end to end (docs/power.md) on a small simulated cluster at speed 100: three
 * nodes of four A100s, idle time 120 simulated seconds (1.2 s), boot 300 s (3 s), no headroom.
 */
describe('power management (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  let dir: string;
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;
  const node = (name: string) => ({
    name,
    cpuMilli: 64000,
    memoryMiB: 512 * 1024,
    gpus: Array.from({ length: 4 }, () => ({ model: 'A100-80GB', nvlinkDomain: 0 })),
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gantry-power-'));
    const topology = join(dir, 'power.json');
    writeFileSync(topology, JSON.stringify({ name: 'power', spines: [{ name: 's0', leaves: [{ name: 'l0', nodes: ['p0', 'p1', 'p2'].map(node) }] }] }));
    sys = await startSystem({
      GANTRY_SIM_CLUSTER: topology,
      GANTRY_SIM_SPEED: '100',
      GANTRY_POWER_MANAGEMENT: 'true',
      GANTRY_POWER_IDLE_SECONDS: '120',
      GANTRY_POWER_HEADROOM: '0',
    });
    acme = await makeTenant(sys.db, 'acme-power', { quota: { guaranteed: 12, limit: 12 } });
    await eventually(async () => (await sys.db.gpu.count()) === 12);
  });
  afterAll(async () => {
    await sys?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const submit = async (name: string, gpus: number) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', acme.auth)
      .send({ teamId: acme.team.id, kind: 'batch', name, resources: { gpus, gpuModel: 'A100-80GB' }, simulation: { durationSeconds: 100_000 } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const job = async (id: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', acme.auth)).body;
  const running = (id: string, ms = 60_000) =>
    eventually(async () => {
      const j = await job(id);
      return j.state === 'running' ? j : undefined;
    }, ms);
  const nodes = async () => {
    const res = await sys.http().get('/v1/nodes?limit=100').set('Authorization', admin);
    expect(res.status).toBe(200);
    return res.body.items as { id: string; name: string; powerState: string; gpusAllocated: number }[];
  };
  const power = (id: string, body: object, auth = admin) => sys.http().post(`/v1/nodes/${id}/power`).set('Authorization', auth).send(body);

  let first: string;
  let busyNode: string;

  it('powers down the nodes left empty for the idle time, never the node holding work, and one of the model stays on', async () => {
    first = await submit('holds-a-node', 4);
    const run = await running(first);
    busyNode = run.placement[0].nodeId;
    // the two empty nodes power down; the node with the job stays on throughout
    const seen = await eventually(async () => {
      const list = await nodes();
      expect(list.find((n) => n.id === busyNode)!.powerState).toBe('on');
      return list.filter((n) => n.powerState === 'off').length === 2 ? list : undefined;
    }, 60_000);
    expect(seen.find((n) => n.id === busyNode)).toMatchObject({ powerState: 'on', gpusAllocated: 4 });
    const offs = await sys.db.event.findMany({ where: { type: 'node.power.off' } });
    expect(offs.length).toBeGreaterThanOrEqual(2);
    // the node holding the job never began powering down after the job was placed on it
    const placedAt = (await sys.db.allocation.findFirstOrThrow({ where: { jobId: first } })).startedAt;
    expect(await sys.db.event.count({ where: { type: 'node.power.powering-down', nodeId: busyNode, createdAt: { gte: placedAt } } })).toBe(0);
    expect((await job(first)).state).toBe('running');
    // a node holding work: powering it off by hand is a 409 naming the work
    const refused = await power(busyNode, { state: 'off' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/holds work/);
    expect((await nodes()).find((n) => n.id === busyNode)!.powerState).toBe('on');
  });

  it('boots an off node for a queued job that fits nowhere, and the job runs on it', async () => {
    const second = await submit('needs-a-booted-node', 4);
    const booting = await eventually(async () => (await nodes()).find((n) => n.powerState === 'powering-up'), 30_000);
    expect((await job(second)).state).toBe('pending');
    const run = await running(second, 60_000);
    expect(run.placement[0].nodeId).toBe(booting.id);
    expect((await nodes()).find((n) => n.id === booting.id)!.powerState).toBe('on');
    const ups = await sys.db.event.findMany({ where: { type: 'node.power.powering-up', nodeId: booting.id } });
    expect(ups[0]!.message).toMatch(/queued job/);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('a node that fails to power up raises an incident, stays off, and comes up when an operator powers it on', async () => {
    const off = (await nodes()).find((n) => n.powerState === 'off')!;
    const inject = await sys.http().post('/v1/sim/faults').set('Authorization', admin).send({ nodeId: off.id, kind: 'power-up-fail' });
    expect(inject.status).toBe(202);
    await new Promise((r) => setTimeout(r, 500)); // the injection runs on the worker
    const third = await submit('needs-the-broken-node', 4);
    const incident = await eventually(async () => {
      const res = await sys.http().get(`/v1/incidents?nodeId=${off.id}`).set('Authorization', admin);
      return (res.body.items as { kind: string; state: string; summary: string }[]).find((i) => i.kind === 'power-up-fail');
    }, 60_000);
    expect(incident.summary).toMatch(/did not come up/);
    expect((await nodes()).find((n) => n.id === off.id)!.powerState).toBe('off');
    // the policy does not boot it again while the incident is open
    await new Promise((r) => setTimeout(r, 2500));
    expect((await nodes()).find((n) => n.id === off.id)!.powerState).toBe('off');
    expect((await job(third)).state).toBe('pending');
    // placement's own transaction refuses a node that is not on, whatever the snapshot said
    const row = await sys.db.job.findUniqueOrThrow({ where: { id: third } });
    const gpus = await sys.db.gpu.findMany({ where: { nodeId: off.id }, orderBy: { index: 'asc' } });
    const placed = await sys.worker.get(SchedulingRepository).commitPlacement(
      row,
      gpus.map((g) => ({ replica: 0, nodeId: off.id, gpuId: g.id, gpuModel: g.model, milli: 1000, gpuUnits: 1, cpuMilli: 1000, memoryMiB: 1024 })),
      'forced onto a powered-off node',
    );
    expect(placed).toBe(false);
    expect(await sys.db.allocation.count({ where: { nodeId: off.id, endedAt: null } })).toBe(0);

    // roles cap the route; bad input is a 400 naming the field
    expect((await power(off.id, { state: 'on' }, acme.auth)).status).toBe(403);
    const bad = await power(off.id, { state: 'sideways' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error)).toMatch(/state/);

    const on = await power(off.id, { state: 'on', reason: 'BMC replaced' });
    expect(on.status).toBe(202);
    expect(on.body.powerState).toBe('powering-up');
    const run = await running(third, 60_000);
    expect(run.placement[0].nodeId).toBe(off.id);
    const resolved = (await sys.http().get(`/v1/incidents?nodeId=${off.id}`).set('Authorization', admin)).body.items.find(
      (i: { kind: string }) => i.kind === 'power-up-fail',
    );
    expect(resolved.state).toBe('resolved');
  });

  it('utilization shows the kWh power management saved to platform admins only', async () => {
    const report = await sys.http().get('/v1/utilization?groupBy=node').set('Authorization', admin);
    expect(report.status).toBe(200);
    expect(report.body.energySavedKWh).toBeGreaterThan(0);
    const spans = await sys.db.nodePowerOff.findMany();
    expect(spans.length).toBeGreaterThanOrEqual(2);
    const tenant = await sys.http().get('/v1/utilization?groupBy=team').set('Authorization', acme.auth);
    expect(tenant.status).toBe(200);
    expect(tenant.body.energySavedKWh).toBeNull();
    for (const j of (await sys.db.job.findMany({ where: { state: { in: ['running', 'pending', 'starting'] } } })).map((x) => x.id)) {
      await sys.http().post(`/v1/jobs/${j}/cancel`).set('Authorization', acme.auth);
    }
  });
});
