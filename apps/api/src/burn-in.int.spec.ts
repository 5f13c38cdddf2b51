import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatTopologyJson, generateTopology } from '@gantry/driver';
import { BOOTSTRAP_ADMIN_KEY, eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';
import { FailoverService } from './modules/failover/failover.service';

/**
 * Repair that is verified (failover + burn-in) end to end on a small simulated cluster (3 nodes x
 * 4 H100, speed 50): after a GPU reset the idle check passes, a burn-in under load (300 simulated
 * seconds, 6 s real) runs on the GPU while it takes no tenant work; a latent fault only load shows
 * fails it twice and the incident waits for a person, who can retry or release.
 */
jest.setTimeout(240_000);

interface IncidentView {
  id: string;
  kind: string;
  state: string;
  nodeId: string;
  gpuId: string;
  gpuIndex: number | null;
  burnInFailures: number;
  resolvedAt: string | null;
  timeline: { step: string; message: string; findings?: { gpuIndex: number; result: string; detail: string }[]; durationSeconds?: number }[];
}

describe('burn-in before repaired hardware goes back into service (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let acme: Awaited<ReturnType<typeof makeTenant>>;
  let nodes: { id: string; gpus: { id: string; index: number }[] }[];
  const admin = `Bearer ${BOOTSTRAP_ADMIN_KEY}`;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gantry-burn-in-'));
    const file = join(dir, 'cluster.json');
    writeFileSync(file, formatTopologyJson(generateTopology({ spines: 1, leavesPerSpine: 1, nodesPerLeaf: 3, gpusPerNode: 4, models: ['H100-80GB'] })));
    sys = await startSystem({ GANTRY_SIM_CLUSTER: file, GANTRY_BURN_IN_SECONDS: '300', GANTRY_BURN_IN_LEVEL: '3' });
    acme = await makeTenant(sys.db, 'acme-burn-in', { quota: { guaranteed: 12, limit: 12 } });
    await eventually(async () => (await sys.db.gpu.count()) >= 12);
    nodes = await sys.db.node.findMany({ orderBy: { name: 'asc' }, include: { gpus: { orderBy: { index: 'asc' } } } });
  });
  afterAll(async () => sys?.close());

  const fault = (body: object, auth = admin) => sys.http().post('/v1/sim/faults').set('Authorization', auth).send(body);
  const incidents = async () => (await sys.http().get('/v1/incidents').set('Authorization', admin)).body.items as IncidentView[];
  const incidentOn = (gpuId: string, pred: (i: IncidentView) => boolean = () => true, ms = 60_000) =>
    eventually(async () => (await incidents()).find((i) => i.gpuId === gpuId && pred(i)), ms);
  const steps = (i: IncidentView) => i.timeline.map((s) => s.step);
  /** While a burn-in runs on the GPU, checks of it arrive six at a time (the driver's exit event, the poll, a restarted worker's re-enqueue). */
  const raceChecks = (gpuId: string) => {
    const failover = sys.worker.get(FailoverService);
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const inc = await sys.db.incident.findFirst({ where: { gpuId, resolvedAt: null } });
        if (inc?.state === 'burn-in') await Promise.all(Array.from({ length: 6 }, () => failover.handle({ action: 'remediate', incidentId: inc.id })));
        else await new Promise((r) => setTimeout(r, 10));
      }
    })();
    return { stop: () => ((stopped = true), loop) };
  };

  it('a reset GPU passes a burn-in under load, taking no tenant work meanwhile, then goes back into service', async () => {
    const gpu = nodes[0]!.gpus[0]!;
    expect((await fault({ nodeId: nodes[0]!.id, gpuIndex: 0, kind: 'xid', xid: 79 })).status).toBe(202);
    const burning = await incidentOn(gpu.id, (i) => i.state === 'burn-in');
    expect(steps(burning)).toEqual(expect.arrayContaining(['detected', 'quarantined', 'remediating', 'validated', 'burn-in-started']));
    expect(burning.timeline.find((s) => s.step === 'burn-in-started')!.message).toMatch(/level 3 under load for 300 s on GPU 0 of/);

    // a job that wants every GPU of the cluster waits: the burning-in GPU is not given out
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', acme.auth)
      .send({
        teamId: acme.team.id,
        kind: 'training',
        name: 'all-gpus',
        replicas: 3,
        resources: { gpus: 4, gpuModel: 'H100-80GB' },
        simulation: { durationSeconds: 30 },
      });
    expect(res.status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500)); // a few scheduling cycles (reconcile every second)
    const during = (await sys.http().get(`/v1/jobs/${res.body.id}`).set('Authorization', acme.auth)).body;
    const stillBurning = (await incidents()).find((i) => i.id === burning.id)!;
    expect(stillBurning.state).toBe('burn-in'); // (what follows was seen while the burn-in ran)
    expect(during.state).toBe('pending');
    expect(await sys.db.allocation.count({ where: { gpuId: gpu.id, endedAt: null } })).toBe(0);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).health).not.toBe('healthy');

    const done = await incidentOn(gpu.id, (i) => i.id === burning.id && !!i.resolvedAt);
    expect(done.state).toBe('resolved');
    const passed = done.timeline.find((s) => s.step === 'burn-in-passed')!;
    expect(passed.findings).toEqual([{ gpuIndex: 0, result: 'pass', detail: 'all tests passed' }]);
    expect(passed.durationSeconds).toBe(300);
    expect(steps(done).indexOf('burn-in-passed')).toBeLessThan(steps(done).indexOf('resolved'));
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).health).toBe('healthy');
    // now the job gets every GPU, the repaired one included
    const ran = await eventually(async () => {
      const j = (await sys.http().get(`/v1/jobs/${res.body.id}`).set('Authorization', acme.auth)).body;
      return j.state === 'running' ? j : undefined;
    }, 60_000);
    expect(ran.placement.flatMap((p: { gpus: { gpuId: string }[] }) => p.gpus.map((g) => g.gpuId))).toContain(gpu.id);
    await sys.http().post(`/v1/jobs/${res.body.id}/cancel`).set('Authorization', acme.auth);
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('a latent fault fails burn-in twice: the GPU stays quarantined and the incident needs a person, who retries after replacing the part', async () => {
    const node = nodes[1]!;
    const gpu = node.gpus[2]!;
    expect((await fault({ nodeId: node.id, kind: 'latent' })).status).toBe(400); // names gpuIndex
    expect((await fault({ nodeId: node.id, gpuIndex: 2, kind: 'latent' })).status).toBe(202);
    expect((await fault({ nodeId: node.id, gpuIndex: 2, kind: 'xid', xid: 79 })).status).toBe(202);
    const stuck = await incidentOn(gpu.id, (i) => i.state === 'needs-attention', 120_000);
    expect(stuck.burnInFailures).toBe(2);
    const failed = stuck.timeline.filter((s) => s.step === 'burn-in-failed');
    expect(failed).toHaveLength(2);
    for (const f of failed) {
      expect(f.findings).toEqual([{ gpuIndex: 2, result: 'fail', detail: expect.stringMatching(/under load/) }]);
      expect(f.durationSeconds).toBeLessThan(300); // the stress test found it part way through
    }
    // repaired again between the two: a second reset
    expect(stuck.timeline.filter((s) => s.step === 'remediating')).toHaveLength(2);
    expect(steps(stuck).at(-1)).toBe('needs-attention');
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).health).not.toBe('healthy');
    // it stays so: nothing re-enqueues it (the loop's re-derivation leaves it alone)
    await new Promise((r) => setTimeout(r, 2000));
    const later = (await incidents()).find((i) => i.id === stuck.id)!;
    expect(later).toMatchObject({ state: 'needs-attention', burnInFailures: 2, resolvedAt: null });
    expect(later.timeline).toHaveLength(stuck.timeline.length);

    // operator answers: tenants may not; a resolved incident takes none; unknown is 404
    expect((await sys.http().post(`/v1/incidents/${stuck.id}/release`).set('Authorization', acme.auth)).status).toBe(403);
    const resolved = (await incidents()).find((i) => i.resolvedAt)!;
    const conflict = await sys.http().post(`/v1/incidents/${resolved.id}/burn-in`).set('Authorization', admin);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.message).toMatch(/needs attention/);
    expect((await sys.http().post('/v1/incidents/no-such-incident/burn-in').set('Authorization', admin)).status).toBe(404);

    // the part is replaced (recover), the operator retries: the burn-in passes and the GPU is back
    expect((await fault({ nodeId: node.id, gpuIndex: 2, kind: 'recover' })).status).toBe(202);
    const retry = await sys.http().post(`/v1/incidents/${stuck.id}/burn-in`).set('Authorization', admin);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ accepted: true, incidentId: stuck.id, action: 'burn-in' });
    const done = await incidentOn(gpu.id, (i) => i.id === stuck.id && !!i.resolvedAt, 60_000);
    expect(steps(done)).toEqual(expect.arrayContaining(['burn-in-retry', 'burn-in-passed', 'resolved']));
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).health).toBe('healthy');
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
  });

  it('checks of a run that race each other give it one verdict: failed twice, it waits for a person and nothing moves it', async () => {
    const node = nodes[0]!;
    const gpu = node.gpus[2]!;
    const racing = raceChecks(gpu.id);
    try {
      await fault({ nodeId: node.id, gpuIndex: 2, kind: 'latent' });
      await fault({ nodeId: node.id, gpuIndex: 2, kind: 'xid', xid: 79 });
      await incidentOn(gpu.id, (i) => i.state === 'needs-attention', 120_000);
      await new Promise((r) => setTimeout(r, 2000));
    } finally {
      await racing.stop();
    }
    const stuck = (await incidents()).find((i) => i.gpuId === gpu.id && !i.resolvedAt)!;
    expect(stuck).toMatchObject({ state: 'needs-attention', burnInFailures: 2 });
    expect(stuck.timeline.filter((s) => s.step === 'burn-in-started')).toHaveLength(2);
    expect(stuck.timeline.filter((s) => s.step === 'burn-in-failed')).toHaveLength(2);
    expect(steps(stuck)).not.toContain('burn-in-lost');
    expect(steps(stuck).at(-1)).toBe('needs-attention');
    expect((await sys.http().post(`/v1/incidents/${stuck.id}/release`).set('Authorization', admin)).status).toBe(202);
    await incidentOn(gpu.id, (i) => i.id === stuck.id && !!i.resolvedAt);
  });

  it('checks of a passing run that race each other put the GPU back into service once', async () => {
    const node = nodes[2]!;
    const gpu = node.gpus[3]!;
    const racing = raceChecks(gpu.id);
    let done: IncidentView;
    try {
      await fault({ nodeId: node.id, gpuIndex: 3, kind: 'xid', xid: 79 });
      done = await incidentOn(gpu.id, (i) => !!i.resolvedAt, 120_000);
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      await racing.stop();
    }
    const after = (await incidents()).find((i) => i.id === done.id)!;
    for (const once of ['burn-in-started', 'burn-in-passed', 'resolved']) expect(after.timeline.filter((s) => s.step === once)).toHaveLength(1);
    expect(steps(after)).not.toContain('burn-in-lost');
    expect(after.state).toBe('resolved');
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).health).toBe('healthy');
  });

  it('release puts hardware that failed burn-in back into service without a pass', async () => {
    const node = nodes[2]!;
    const gpu = node.gpus[1]!;
    await fault({ nodeId: node.id, gpuIndex: 1, kind: 'latent' });
    await fault({ nodeId: node.id, gpuIndex: 1, kind: 'xid', xid: 79 });
    const stuck = await incidentOn(gpu.id, (i) => i.state === 'needs-attention', 120_000);
    const res = await sys.http().post(`/v1/incidents/${stuck.id}/release`).set('Authorization', admin);
    expect([res.status, res.body]).toEqual([202, { accepted: true, incidentId: stuck.id, action: 'release' }]);
    const done = await incidentOn(gpu.id, (i) => i.id === stuck.id && !!i.resolvedAt);
    expect(steps(done)).toEqual(expect.arrayContaining(['released', 'resolved']));
    expect(done.timeline.find((s) => s.step === 'released')!.message).toMatch(/without a passing burn-in/);
    expect((await sys.db.gpu.findUniqueOrThrow({ where: { id: gpu.id } })).health).toBe('healthy');
  });
});
