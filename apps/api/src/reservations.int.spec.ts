import { createApiKey, createTeam } from '@gantry/db';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';
import { checkInvariants } from './invariants';

/**
 * Reservations end to end on the simulated cluster (docs/reservations.md): the capacity check
 * (409 naming the conflict and the window), others using the held GPUs before the window but
 * only with work that can leave by its start, and the holder getting them at the start within
 * the documented bound (the other team's preemptible job is checkpointed and requeued).
 */
describe('reservations (real Postgres and Redis, simulated cluster)', () => {
  const TICK_SECONDS = 1;
  let sys: TestSystem;
  let holder: { team: { id: string }; auth: string; tenantId: string };
  let other: { team: { id: string }; auth: string };
  let outsider: { team: { id: string }; auth: string };
  let tenantAdmin: string;
  let cordoned: string[] = [];
  const SCOPES = ['jobs:read', 'jobs:write', 'quotas:read', 'quotas:write', 'cluster:read'];

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '20', GANTRY_RESERVATION_TICK_SECONDS: String(TICK_SECONDS) });
    const t = await makeTenant(sys.db, 'hold-int', { role: 'tenant_admin', scopes: SCOPES });
    holder = { ...t, tenantId: t.tenant.id };
    const teamO = await createTeam(sys.db, t.tenant.id, { name: 'others', slug: 'others', quota: { guaranteed: 64, limit: 128 } });
    const keyO = await createApiKey(sys.db, { name: 'o', role: 'team_admin', tenantId: t.tenant.id, teamId: teamO.id, scopes: SCOPES });
    other = { team: teamO, auth: `Bearer ${keyO.key}` };
    tenantAdmin = `Bearer ${(await createApiKey(sys.db, { name: 'admin', role: 'tenant_admin', tenantId: t.tenant.id, scopes: SCOPES })).key}`;
    const y = await makeTenant(sys.db, 'hold-int-y', { role: 'tenant_admin', scopes: SCOPES });
    outsider = y;
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
    // Two idle, ready 8 x A100 nodes stay in placement: 16 GPUs.
    const nodes = await sys.db.node.findMany({
      where: {
        state: 'ready',
        gpus: { some: { model: 'A100-80GB' }, every: { model: 'A100-80GB', mode: 'whole', health: 'healthy', allocations: { none: { endedAt: null } } } },
      },
      orderBy: { name: 'desc' },
      take: 2,
    });
    expect(nodes).toHaveLength(2);
    cordoned = (await sys.db.node.findMany({ where: { id: { notIn: nodes.map((n) => n.id) }, state: 'ready' }, select: { id: true } })).map((n) => n.id);
    await sys.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'cordoned' } });
  });
  afterAll(async () => {
    await sys?.db.node.updateMany({ where: { id: { in: cordoned } }, data: { state: 'ready' } });
    await sys?.close();
  });

  const reserve = (auth: string, body: object) => sys.http().post('/v1/reservations').set('Authorization', auth).send(body);
  const get = async (id: string, auth: string) => (await sys.http().get(`/v1/jobs/${id}`).set('Authorization', auth)).body;
  const submit = async (auth: string, teamId: string, body: object) => {
    const res = await sys
      .http()
      .post('/v1/jobs')
      .set('Authorization', auth)
      .send({ teamId, kind: 'training', resources: { gpus: 8, gpuModel: 'A100-80GB' }, topology: { level: 'node', required: true }, ...body });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const until = async (id: string, auth: string, ok: (j: { state: string; reasons: { code: string; message: string }[] }) => boolean, ms = 40_000) => {
    let last: unknown;
    try {
      return await eventually(async () => {
        const j = await get(id, auth);
        last = j;
        return ok(j) ? j : undefined;
      }, ms);
    } catch {
      throw new Error(`job ${id}: condition never met, last ${JSON.stringify(last).slice(0, 600)}`);
    }
  };

  it('refuses an overlap beyond the model’s capacity with 409 naming the reservation and the window; another tenant sees only that one exists', async () => {
    const first = await reserve(holder.auth, {
      teamId: holder.team.id,
      name: 'big run',
      gpuModel: 'A100-80GB',
      gpus: 100,
      startsAt: '2031-03-03T08:00:00Z',
      endsAt: '2031-03-03T16:00:00Z',
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ heldGpus: 100, active: false });
    const second = await reserve(other.auth, {
      teamId: other.team.id,
      name: 'eval',
      gpuModel: 'A100-80GB',
      gpus: 40,
      startsAt: '2031-03-03T15:00:00Z',
      endsAt: '2031-03-03T18:00:00Z',
    });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toContain(first.body.id);
    expect(second.body.error.message).toContain('"big run"');
    expect(second.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'window', problem: '2031-03-03T15:00:00.000Z/2031-03-03T16:00:00.000Z' },
        { field: 'conflictsWith', problem: first.body.id },
      ]),
    );
    // A follow-the-sun window (weekdays 14:00 UTC for 4 h) hits the same stretch.
    const recurring = await reserve(outsider.auth, {
      teamId: outsider.team.id,
      name: 'sun',
      gpuModel: 'A100-80GB',
      gpus: 60,
      startsAt: '2031-03-01T00:00:00Z',
      endsAt: '2031-03-08T00:00:00Z',
      recurrence: { cron: '0 14 * * 1-5', timeZone: 'UTC', durationMinutes: 240 },
    });
    expect(recurring.status).toBe(409);
    expect(recurring.body.error.message).toContain('another tenant');
    expect(JSON.stringify(recurring.body)).not.toContain(first.body.id);
    expect(JSON.stringify(recurring.body)).not.toContain('big run');
    // Right after it, it fits.
    const after = await reserve(other.auth, {
      teamId: other.team.id,
      name: 'eval',
      gpuModel: 'A100-80GB',
      gpus: 40,
      startsAt: '2031-03-03T16:00:00Z',
      endsAt: '2031-03-03T18:00:00Z',
    });
    expect(after.status).toBe(201);
    // Bad input names the field; isolation between tenants.
    const bad = await reserve(holder.auth, {
      teamId: holder.team.id,
      name: 'x',
      gpuModel: 'A100-80GB',
      gpus: 1,
      nodes: 1,
      startsAt: '2031-01-01T00:00:00Z',
      endsAt: '2030-01-01T00:00:00Z',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['gpus', 'endsAt']));
    expect((await sys.http().get(`/v1/reservations/${first.body.id}`).set('Authorization', outsider.auth)).status).toBe(404);
    expect((await sys.http().delete(`/v1/reservations/${first.body.id}`).set('Authorization', outsider.auth)).status).toBe(404);
    const list = await sys.http().get('/v1/reservations?from=2031-03-01T00:00:00Z&to=2031-03-08T00:00:00Z').set('Authorization', outsider.auth);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    // The tenant admin sees both teams' reservations; a team-bound key its own team's.
    const range = '/v1/reservations?gpuModel=A100-80GB&from=2031-03-01T00:00:00Z&to=2031-03-08T00:00:00Z';
    const mine = await sys.http().get(range).set('Authorization', tenantAdmin);
    expect(mine.body.items.map((r: { id: string }) => r.id).sort()).toEqual([first.body.id, after.body.id].sort());
    expect((await sys.http().get(range).set('Authorization', other.auth)).body.items.map((r: { id: string }) => r.id)).toEqual([after.body.id]);
    expect(mine.body.capacity).toEqual(expect.arrayContaining([{ gpuModel: 'A100-80GB', gpus: 128, gpusPerNode: 8 }]));
    // A team admin reserves only for its own team (another team is not in its scope: 404).
    const notMine = await reserve(other.auth, {
      teamId: holder.team.id,
      name: 'x',
      gpuModel: 'A100-80GB',
      gpus: 1,
      startsAt: '2032-01-01T00:00:00Z',
      endsAt: '2032-01-02T00:00:00Z',
    });
    expect(notMine.status).toBe(404);
    for (const id of [first.body.id, after.body.id])
      expect((await sys.http().delete(`/v1/reservations/${id}`).set('Authorization', tenantAdmin)).status).toBe(204);
  });

  it('edits a reservation with the same checks as a create: capacity without itself, 400 naming the field, permissions', async () => {
    const patch = (id: string, auth: string, body: object) => sys.http().patch(`/v1/reservations/${id}`).set('Authorization', auth).send(body);
    const day = '2031-04-07';
    const big = await reserve(holder.auth, {
      teamId: holder.team.id,
      name: 'big',
      gpuModel: 'A100-80GB',
      gpus: 100,
      startsAt: `${day}T08:00:00Z`,
      endsAt: `${day}T16:00:00Z`,
    });
    const late = await reserve(other.auth, {
      teamId: other.team.id,
      name: 'late',
      gpuModel: 'A100-80GB',
      gpus: 20,
      startsAt: `${day}T16:00:00Z`,
      endsAt: `${day}T18:00:00Z`,
    });
    expect([big.status, late.status]).toEqual([201, 201]);

    // Growing itself is checked against the others only (100 -> 110 of 128 fits; 100 + 110 would not).
    const grown = await patch(big.body.id, holder.auth, { gpus: 110, name: 'bigger' });
    expect(grown.status).toBe(200);
    expect(grown.body).toMatchObject({ id: big.body.id, name: 'bigger', gpus: 110, heldGpus: 110, startsAt: `${day}T08:00:00.000Z` });
    // Moving the other one into its window passes the capacity: 409 naming it and the stretch.
    const clash = await patch(late.body.id, other.auth, { startsAt: `${day}T15:00:00Z` });
    expect(clash.status).toBe(409);
    expect(clash.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'window', problem: `${day}T15:00:00.000Z/${day}T16:00:00.000Z` },
        { field: 'conflictsWith', problem: big.body.id },
      ]),
    );
    // Bad input: 400 naming the field, nothing written.
    const bad = await patch(big.body.id, holder.auth, { endsAt: `${day}T07:00:00Z` });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toContain('endsAt');
    expect((await patch(big.body.id, holder.auth, { gpus: 8, nodes: 1 })).body.error.details.map((d: { field: string }) => d.field)).toContain('gpus');
    expect((await patch(big.body.id, holder.auth, { gpuModel: 'H100-80GB' })).status).toBe(400);
    const kept = await sys.http().get(`/v1/reservations/${big.body.id}`).set('Authorization', holder.auth);
    expect(kept.body).toMatchObject({ name: 'bigger', gpus: 110, endsAt: `${day}T16:00:00.000Z` });
    // Recurring, then one-off again; a size in nodes replaces the size in GPUs.
    const weekly = await patch(late.body.id, other.auth, {
      startsAt: `${day}T00:00:00Z`,
      endsAt: '2031-04-12T00:00:00Z',
      recurrence: { cron: '0 17 * * *', timeZone: 'UTC', durationMinutes: 60 },
      nodes: 1,
    });
    expect(weekly.status).toBe(200);
    expect(weekly.body).toMatchObject({ gpus: null, nodes: 1, heldGpus: 8, recurrence: { cron: '0 17 * * *', timeZone: 'UTC', durationMinutes: 60 } });
    const once = await patch(late.body.id, other.auth, { recurrence: null, startsAt: `${day}T16:00:00Z`, endsAt: `${day}T18:00:00Z` });
    expect(once.body).toMatchObject({ recurrence: null, nodes: 1 });
    // Same permissions as a delete: another tenant and another team's admin see nothing (404).
    expect((await patch(big.body.id, outsider.auth, { name: 'mine now' })).status).toBe(404);
    expect((await patch(big.body.id, other.auth, { name: 'mine now' })).status).toBe(404);
    for (const id of [big.body.id, late.body.id])
      expect((await sys.http().delete(`/v1/reservations/${id}`).set('Authorization', tenantAdmin)).status).toBe(204);
  });

  it('refuses a reservation (or an edit) larger than the team’s quota limit for the model with 409 naming gpus or nodes and the limit', async () => {
    const small = await createTeam(sys.db, holder.tenantId, { name: 'small', slug: 'small', quota: { guaranteed: 8, limit: 16 } });
    const body = { teamId: small.id, name: 'too big', gpuModel: 'A100-80GB', startsAt: '2031-05-05T08:00:00Z', endsAt: '2031-05-05T10:00:00Z' };
    const gpus = await reserve(tenantAdmin, { ...body, gpus: 24 });
    expect(gpus.status).toBe(409);
    expect(gpus.body.error.code).toBe('quota_exceeded');
    expect(gpus.body.error.details).toEqual([{ field: 'gpus', problem: 'needs 24 GPUs > limit 16' }]);
    const nodes = await reserve(tenantAdmin, { ...body, nodes: 3 });
    expect(nodes.status).toBe(409);
    expect(nodes.body.error.details).toEqual([{ field: 'nodes', problem: 'needs 24 GPUs > limit 16' }]);
    // Within the limit it is taken (guaranteed or not: a reservation may borrow up to the limit)...
    const fits = await reserve(tenantAdmin, { ...body, name: 'fits', gpus: 16 });
    expect(fits.status).toBe(201);
    // ...and an edit past it is refused, the reservation unchanged.
    const grow = await sys.http().patch(`/v1/reservations/${fits.body.id}`).set('Authorization', tenantAdmin).send({ nodes: 3 });
    expect(grow.status).toBe(409);
    expect(grow.body.error.details).toEqual([{ field: 'nodes', problem: 'needs 24 GPUs > limit 16' }]);
    expect((await sys.http().get(`/v1/reservations/${fits.body.id}`).set('Authorization', tenantAdmin)).body).toMatchObject({ gpus: 16, nodes: null });
    expect((await sys.http().delete(`/v1/reservations/${fits.body.id}`).set('Authorization', tenantAdmin)).status).toBe(204);
  });

  it('others use the held GPUs before the window only with work that can leave by its start; at the start the holder gets them within the bound', async () => {
    // The window starts in an hour (inside the look-ahead); once the scene is set, the test
    // moves its start to just ahead (the clock of the window, not of the machine, is the test's).
    const inAnHour = Date.now() + 3_600_000;
    const r = await reserve(holder.auth, {
      teamId: holder.team.id,
      name: 'launch window',
      gpuModel: 'A100-80GB',
      nodes: 1,
      startsAt: new Date(inAnHour).toISOString(),
      endsAt: new Date(inAnHour + 600_000).toISOString(),
    });
    expect(r.status).toBe(201);
    expect(r.body.heldGpus).toBe(8);
    // Before the window: non-preemptible work without an end goes to the GPUs nobody holds...
    const fixed = await submit(other.auth, other.team.id, { name: 'o-fixed' });
    await until(fixed, other.auth, (j) => j.state === 'running');
    // ...preemptible work may use the held node until the start...
    const pre = await submit(other.auth, other.team.id, { name: 'o-preemptible', preemptible: true, simulation: { durationSeconds: 100_000 } });
    await until(pre, other.auth, (j) => j.state === 'running');
    // ...and a second non-preemptible job waits, told why.
    const kept = await submit(other.auth, other.team.id, { name: 'o-kept-off', simulation: { durationSeconds: 100_000 } });
    const waiting = await until(kept, other.auth, (j) => j.reasons.some((x) => x.code === 'reserved_capacity'));
    expect(waiting.state).toBe('pending');
    expect(waiting.reasons.find((x: { code: string }) => x.code === 'reserved_capacity')!.message).toContain('"launch window"');
    // The holder's job waits for its window.
    const mine = await submit(holder.auth, holder.team.id, { name: 'h-launch', simulation: { durationSeconds: 100_000 } });
    await until(mine, holder.auth, (j) => j.reasons.length > 0);
    expect((await get(mine, holder.auth)).state).toBe('pending');
    expect((await get(pre, other.auth)).state).toBe('running');
    const startsAt = Date.now() + 1000;
    await sys.db.reservation.update({ where: { id: r.body.id }, data: { startsAt: new Date(startsAt) } });

    // At the start: the preemptible job is checkpointed and requeued, the holder placed.
    const placed = await until(mine, holder.auth, (j) => j.state === 'running', 60_000);
    const events = await sys.db.event.findMany({ where: { jobId: { in: [mine, pre] } }, orderBy: { createdAt: 'asc' } });
    const preempted = events.find((e) => e.jobId === pre && e.type === 'job.preempted')!;
    const holderPlaced = events.find((e) => e.jobId === mine && e.type === 'job.placed')!;
    expect(preempted.message).toContain('reservation "launch window"');
    expect(preempted.createdAt.getTime()).toBeGreaterThanOrEqual(startsAt);
    expect(holderPlaced.createdAt.getTime()).toBeGreaterThan(preempted.createdAt.getTime());
    const heldNode = placed.placement[0].nodeName;
    const requeued = await until(pre, other.auth, (j) => j.state === 'pending');
    expect(requeued.progress).toBeGreaterThan(0);
    expect((await get(fixed, other.auth)).state).toBe('running');
    expect((await get(fixed, other.auth)).placement[0].nodeName).not.toBe(heldNode);
    // The bound (docs/reservations.md): one tick + one cycle + the victim's checkpoint + the start.
    const waitedMs = holderPlaced.createdAt.getTime() - startsAt;
    console.log(`reservation: holder placed ${waitedMs} ms after the window opened (tick ${TICK_SECONDS} s, sim speed 20)`);
    expect(waitedMs).toBeLessThan(30_000);
    // While the window is open the other team's preemptible job stays off the held node.
    const still = await until(pre, other.auth, (j) => j.reasons.some((x) => x.code === 'reserved_capacity'));
    expect(still.state).toBe('pending');
    expect((await checkInvariants(sys.db)).violations).toEqual([]);
    for (const [id, auth] of [
      [fixed, other.auth],
      [pre, other.auth],
      [kept, other.auth],
      [mine, holder.auth],
    ] as const) {
      await sys.http().post(`/v1/jobs/${id}/cancel`).set('Authorization', auth);
    }
    expect((await sys.http().delete(`/v1/reservations/${r.body.id}`).set('Authorization', holder.auth)).status).toBe(204);
  });
});
