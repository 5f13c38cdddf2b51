import { resolve } from 'node:path';
import { createApiKey } from '@gantry/db';
import { partitionModeLayout, partitionModeLayoutOf } from '@gantry/contracts';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

const ALL = ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write', 'cluster:read'];
const TOPOLOGY = resolve(__dirname, '../../../packages/driver/topologies/demo-accelerators.json');

/**
 * New accelerators enter as catalog data: on the accelerators demo cluster (the demo plus an
 * MI300X leaf, half of one node in CPX/NPS4, and a B200 leaf) quotas per model govern MI300X
 * partitions and B200 GPUs and MIG slices the way they govern H100s: a partition counts its
 * compute share (an MI300X CPX partition: one XCD of eight; a B200 3g: 3/7).
 */
describe('quotas per model for MI300X and B200 (real Postgres and Redis, accelerators demo cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let admin: string;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_CLUSTER: TOPOLOGY, GANTRY_RECONCILE_SECONDS: '600' });
    t = await makeTenant(sys.db, 'accelerators', { quota: { guaranteed: 16, limit: 32 } });
    admin = `Bearer ${(await createApiKey(sys.db, { name: 'ta', role: 'tenant_admin', tenantId: t.tenant.id, scopes: ALL })).key}`;
    await eventually(async () => (await sys.db.gpu.count()) >= 288, 60_000);
    const quotas = [
      { gpuModel: '*', guaranteed: 16, limit: 32 },
      { gpuModel: 'MI300X-192GB', guaranteed: 0.25, limit: 0.25 },
      { gpuModel: 'B200-180GB', guaranteed: 1, limit: 1 },
    ];
    expect((await sys.http().put(`/v1/teams/${t.team.id}/quotas`).set('Authorization', admin).send({ quotas })).status).toBe(200);
  }, 90_000);
  afterAll(async () => sys?.close());

  const submit = (name: string, resources: object, replicas = 1) =>
    sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', t.auth)
      .send({ teamId: t.team.id, name, kind: 'notebook', replicas, resources, simulation: { durationSeconds: 5000 } });
  const job = async (id: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', t.auth)).body;
  const running = (id: string) => eventually(async () => ((await job(id)).state === 'running' ? job(id) : undefined), 45_000);
  const cancel = (id: string) => sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', t.auth);

  it('the inventory knows the MI300X nodes, their CPX/NPS4 partitions and the B200 nodes', async () => {
    expect(await sys.db.gpu.count({ where: { model: 'MI300X-192GB' } })).toBe(16);
    expect(await sys.db.gpu.count({ where: { model: 'B200-180GB' } })).toBe(16);
    const slices = await sys.db.gpuInstance.findMany({ where: { profile: 'cpx_nps4' } });
    expect(slices).toHaveLength(32);
  });

  it('MI300X: two CPX partitions fill a quarter-GPU quota; three could never fit; a third job waits', async () => {
    const tooBig = await submit('three-xcds', { migProfile: 'cpx_nps4', gpuModel: 'MI300X-192GB' }, 3);
    expect(tooBig.status).toBe(409);
    expect(tooBig.body.error.message).toContain('MI300X-192GB');

    const two = await submit('two-xcds', { migProfile: 'cpx_nps4', gpuModel: 'MI300X-192GB' }, 2);
    expect(two.status).toBe(201);
    const run = await running(two.body.id);
    for (const r of run.placement) {
      expect(r.nodeName).toBe('mi300x-s2-l0-n0');
      expect(r.gpus[0].migProfile).toBe('cpx_nps4');
    }
    const usage = (await sys.http().get(`/v1/teams/${t.team.id}/usage`).set('Authorization', admin)).body;
    expect(usage.byModel).toEqual(expect.arrayContaining([{ gpuModel: 'MI300X-192GB', inUse: 0.25 }]));

    const third = await submit('one-more-xcd', { migProfile: 'cpx_nps4', gpuModel: 'MI300X-192GB' });
    expect(third.status).toBe(201);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await job(third.body.id)).state).toBe('pending');
    await cancel(two.body.id);
    await running(third.body.id);
    await cancel(third.body.id);
  }, 120_000);

  it('an operator changes an MI300X GPU from SPX to DPX/NPS1 and back; half a mode or two modes are a 400 naming the rule', async () => {
    const gpu = await sys.db.gpu.findFirstOrThrow({ where: { model: 'MI300X-192GB', node: { name: 'mi300x-s2-l0-n1' }, index: 7 } });
    const put = (layout: object[]) => sys.http().put(`/v1/gpus/${gpu.id}/mig`).set('Authorization', `Bearer ${BOOTSTRAP_ADMIN_KEY}`).send({ layout });
    const half = await put(partitionModeLayoutOf('MI300X-192GB', 'qpx_nps1')!.slice(0, 2));
    expect(half.status).toBe(400);
    expect(half.body.error.message).toMatch(/partial_mode/);
    const mixed = await put([
      { profile: 'dpx_nps1', start: 0 },
      { profile: 'qpx_nps1', start: 4 },
      { profile: 'qpx_nps1', start: 6 },
    ]);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.message).toMatch(/mixed_modes/);

    const dpx = partitionModeLayout('MI300X-192GB', 'DPX', 'NPS1');
    if (!dpx.ok) throw new Error(dpx.message);
    expect((await put(dpx.layout)).status).toBe(202);
    await eventually(async () => {
      const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id }, include: { instances: true } });
      return (
        g.mode === 'mig' &&
        g.schedulable &&
        g.instances
          .map((i) => `${i.profile}@${i.start}`)
          .sort()
          .join() === 'dpx_nps1@0,dpx_nps1@4'
      );
    }, 45_000);
    expect((await put([])).status).toBe(202);
    await eventually(async () => {
      const g = await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } });
      return g.mode === 'whole' && g.schedulable;
    }, 45_000);
  }, 120_000);

  it('B200: one whole GPU within its limit runs on a B200 node, two could never fit; a 3g.90gb counts 3/7', async () => {
    const two = await submit('two-b200', { gpus: 2, gpuModel: 'B200-180GB' });
    expect(two.status).toBe(409);
    const one = await submit('one-b200', { gpus: 1, gpuModel: 'B200-180GB' });
    expect(one.status).toBe(201);
    expect((await running(one.body.id)).placement[0].nodeName).toMatch(/^b200-s2-l1-n[01]$/);
    await cancel(one.body.id);
    await eventually(async () => ((await job(one.body.id)).state === 'cancelled' ? true : undefined));

    const slice = await submit('b200-slice', { migProfile: '3g.90gb', gpuModel: 'B200-180GB' });
    expect(slice.status).toBe(201);
    const run = await running(slice.body.id);
    expect(run.placement[0].gpus[0].migProfile).toBe('3g.90gb');
    const usage = (await sys.http().get(`/v1/teams/${t.team.id}/usage`).set('Authorization', admin)).body;
    const b200 = usage.byModel.find((m: { gpuModel: string }) => m.gpuModel === 'B200-180GB');
    expect(b200.inUse).toBeCloseTo(3 / 7, 3);
    await cancel(slice.body.id);
  }, 150_000);
});
