import { QueuesService } from './queues/queues.service';
import { SchedulesService } from './modules/schedules/schedules.service';
import { eventually, makeTenant, startSystem, type TestSystem } from './test-support/system';

/** Suspend and resume windows: a cron in a time zone, run once per fire by the worker's tick. */
describe('suspend schedules (real Postgres and Redis, simulated cluster)', () => {
  let sys: TestSystem;
  let t: Awaited<ReturnType<typeof makeTenant>>;
  let other: Awaited<ReturnType<typeof makeTenant>>;

  beforeAll(async () => {
    sys = await startSystem({ GANTRY_SIM_SPEED: '50' });
    t = await makeTenant(sys.db, 'schedules-int');
    other = await makeTenant(sys.db, 'schedules-other');
    await eventually(async () => (await sys.db.gpu.count()) >= 256);
  });
  afterAll(async () => sys?.close());

  const http = () => sys.http();
  const get = async (id: string) => (await http().get(`/v1/jobs/${id}`).set('Authorization', t.auth)).body;
  const post = (path: string, body: object = {}, auth = t.auth) => http().post(path).set('Authorization', auth).send(body);
  const inState = (id: string, want: string) => eventually(async () => ((await get(id)).state === want ? get(id) : undefined));

  it.each([
    ['a 6-field cron', { cron: '0 0 18 * * 1-5', timeZone: 'Europe/Berlin' }, 'cron'],
    ['a cron out of range', { cron: '61 18 * * *', timeZone: 'Europe/Berlin' }, 'cron'],
    ['an unknown time zone', { cron: '0 18 * * 1-5', timeZone: 'Mars/Olympus_Mons' }, 'timeZone'],
  ])('refuses %s with 400 naming the field', async (_n, body, wantField) => {
    const res = await post(`/v1/teams/${t.team.id}/schedules`, { action: 'suspend', ...body });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([wantField]);
  });

  it('creates, lists and deletes a schedule; another tenant gets 404 for all three', async () => {
    const c = await post(`/v1/teams/${t.team.id}/schedules`, { action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin' });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ teamId: t.team.id, jobId: null, action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin', lastRunAt: null });
    const list = await http().get(`/v1/teams/${t.team.id}/schedules`).set('Authorization', t.auth);
    expect(list.body.items.map((s: { id: string }) => s.id)).toEqual([c.body.id]);

    expect((await post(`/v1/teams/${t.team.id}/schedules`, { action: 'suspend', cron: '0 18 * * 1-5', timeZone: 'UTC' }, other.auth)).status).toBe(404);
    expect((await http().get(`/v1/teams/${t.team.id}/schedules`).set('Authorization', other.auth)).status).toBe(404);
    expect((await http().delete(`/v1/schedules/${c.body.id}`).set('Authorization', other.auth)).status).toBe(404);

    expect((await http().delete(`/v1/schedules/${c.body.id}`).set('Authorization', t.auth)).status).toBe(204);
    expect((await http().delete(`/v1/schedules/${c.body.id}`).set('Authorization', t.auth)).status).toBe(404);
  });

  it('a team schedule due a minute ago fires once (the team is suspended), and not twice', async () => {
    const job = (
      await post('/v1/jobs', { teamId: t.team.id, name: 'night-train', kind: 'training', resources: { gpus: 4 }, simulation: { durationSeconds: 5000 } })
    ).body;
    await inState(job.id, 'running');

    // Due one minute ago, read in Berlin time.
    const minuteAgo = new Date(Date.now() - 60_000);
    const [hh, mm] = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .format(minuteAgo)
      .split(':');
    const cron = `${Number(mm)} ${Number(hh)} * * *`;
    const c = await post(`/v1/teams/${t.team.id}/schedules`, { action: 'suspend', cron, timeZone: 'Europe/Berlin' });
    expect(c.status).toBe(201);
    // Made before that fire time.
    await sys.db.suspendSchedule.update({ where: { id: c.body.id }, data: { createdAt: new Date(Date.now() - 10 * 60_000) } });

    const schedules = sys.worker.get(SchedulesService);
    // Two ticks at once and one through the queue: exactly one runs the fire.
    const reports = await Promise.all([schedules.tick(), schedules.tick()]);
    await sys.worker.get(QueuesService).queue('schedules').add('tick', {});
    const fired = reports.flatMap((r) => r.fired).filter((f) => f.scheduleId === c.body.id);
    expect(fired).toHaveLength(1);
    expect(fired[0]!.jobIds).toEqual([job.id]);

    const suspended = await inState(job.id, 'suspended');
    expect(suspended.placement).toEqual([]);
    const row = await sys.db.suspendSchedule.findUniqueOrThrow({ where: { id: c.body.id } });
    expect(row.lastRunAt?.toISOString()).toBe(fired[0]!.fire);

    // Resumed by hand: later ticks within the same fire do not suspend it again.
    expect((await post(`/v1/teams/${t.team.id}/resume`)).body.resumed).toBe(1);
    await inState(job.id, 'running');
    expect((await schedules.tick()).fired.filter((f) => f.scheduleId === c.body.id)).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await get(job.id)).state).toBe('running');
    expect(await sys.db.event.count({ where: { jobId: job.id, type: 'job.suspending' } })).toBe(1);
    await post(`/v1/jobs/${job.id}/cancel`);
    await http().delete(`/v1/schedules/${c.body.id}`).set('Authorization', t.auth);
  });
});
