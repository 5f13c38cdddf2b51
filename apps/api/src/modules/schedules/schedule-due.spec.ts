import { cronProblem, dueFireTime, previousFire, timeZoneProblem } from './schedule-due';

const d = (iso: string) => new Date(iso);

describe('previousFire', () => {
  it.each([
    // 18:00 Berlin on weekdays: CET (UTC+1) in winter, CEST (UTC+2) in summer.
    ['Berlin weekday evening, winter', '0 18 * * 1-5', 'Europe/Berlin', '2026-11-30T18:00:00Z', '2026-11-30T17:00:00.000Z'],
    ['Berlin weekday evening, summer', '0 18 * * 1-5', 'Europe/Berlin', '2026-07-01T16:30:00Z', '2026-07-01T16:00:00.000Z'],
    ['Berlin on a Monday morning: Friday evening', '0 18 * * 1-5', 'Europe/Berlin', '2026-11-30T08:00:00Z', '2026-11-27T17:00:00.000Z'],
    ['exactly at the fire time counts', '0 18 * * 1-5', 'Europe/Berlin', '2026-11-30T17:00:00Z', '2026-11-30T17:00:00.000Z'],
    ['New York morning', '30 8 * * *', 'America/New_York', '2026-11-30T14:00:00Z', '2026-11-30T13:30:00.000Z'],
    ['Tokyo, no DST', '0 9 * * 1-5', 'Asia/Tokyo', '2026-11-30T01:00:00Z', '2026-11-30T00:00:00.000Z'],
    ['UTC every minute', '* * * * *', 'UTC', '2026-11-30T06:55:42Z', '2026-11-30T06:55:00.000Z'],
  ])('%s', (_n, cron, tz, now, wantFire) => {
    expect(previousFire(cron, tz, d(now)).toISOString()).toBe(wantFire);
  });
});

describe('dueFireTime', () => {
  const berlin = { cron: '0 18 * * 1-5', timeZone: 'Europe/Berlin', createdAt: d('2026-11-01T00:00:00Z') };
  it.each([
    ['never run, fired since creation', { lastRunAt: null }, '2026-11-30T17:01:00Z', '2026-11-30T17:00:00.000Z'],
    ['already ran that fire', { lastRunAt: d('2026-11-30T17:00:00Z') }, '2026-11-30T17:05:00Z', null],
    ['ran the day before', { lastRunAt: d('2026-11-27T17:00:00Z') }, '2026-11-30T17:00:30Z', '2026-11-30T17:00:00.000Z'],
    ['before the evening fire, last ran Friday', { lastRunAt: d('2026-11-27T17:00:00Z') }, '2026-11-30T16:59:00Z', null],
    ['created after the last fire', { lastRunAt: null, createdAt: d('2026-11-30T17:30:00Z') }, '2026-11-30T18:00:00Z', null],
    ['missed fires collapse into the latest', { lastRunAt: d('2026-11-20T17:00:00Z') }, '2026-11-30T20:00:00Z', '2026-11-30T17:00:00.000Z'],
  ])('%s', (_n, over, now, wantDue) => {
    const got = dueFireTime({ ...berlin, ...over }, d(now));
    expect(got?.toISOString() ?? null).toBe(wantDue);
  });
});

describe('validation', () => {
  it.each([
    ['0 18 * * 1-5', null],
    ['*/15 * * * *', null],
    ['0 18 * *', 'must have 5 fields'],
    ['0 0 18 * * 1-5', 'must have 5 fields'],
    ['61 18 * * *', 'not a valid cron'],
  ])('cron %j', (cron, wantProblem) => {
    const got = cronProblem(cron);
    if (wantProblem === null) expect(got).toBeNull();
    else expect(got).toContain(wantProblem);
  });

  it.each([
    ['Europe/Berlin', true],
    ['UTC', true],
    ['Mars/Olympus_Mons', false],
  ])('time zone %s valid: %s', (tz, wantValid) => {
    expect(timeZoneProblem(tz) === null).toBe(wantValid);
  });
});
