import { findConflict, openWindow, windowsOf, type Booked } from './reservation-windows';

const t = (iso: string) => Date.parse(iso);
const H = 3_600_000;

describe('windowsOf', () => {
  it('a one-off reservation has its one window when it overlaps the range', () => {
    const r = { startsAt: t('2026-12-07T08:00:00Z'), endsAt: t('2026-12-07T12:00:00Z') };
    expect(windowsOf(r, t('2026-12-07T00:00:00Z'), t('2026-12-08T00:00:00Z'))).toEqual([{ start: r.startsAt, end: r.endsAt }]);
    expect(windowsOf(r, t('2026-12-07T12:00:00Z'), t('2026-12-08T00:00:00Z'))).toEqual([]);
  });

  it('follow-the-sun: 09:00 Tokyo on weekdays for 8 h, read in its zone, within the span', () => {
    const r = {
      startsAt: t('2026-12-07T00:00:00Z'), // Monday
      endsAt: t('2026-12-12T00:00:00Z'),
      cron: '0 9 * * 1-5',
      timeZone: 'Asia/Tokyo',
      durationMinutes: 480,
    };
    const w = windowsOf(r, r.startsAt, r.endsAt);
    expect(w.map((x) => new Date(x.start).toISOString())).toEqual([
      '2026-12-07T00:00:00.000Z',
      '2026-12-08T00:00:00.000Z',
      '2026-12-09T00:00:00.000Z',
      '2026-12-10T00:00:00.000Z',
      '2026-12-11T00:00:00.000Z',
    ]);
    expect(w.every((x) => x.end - x.start === 8 * H)).toBe(true);
    // A window that began before the range is still listed while it is open.
    expect(windowsOf(r, t('2026-12-08T03:00:00Z'), t('2026-12-08T04:00:00Z'))).toEqual([{ start: t('2026-12-08T00:00:00Z'), end: t('2026-12-08T08:00:00Z') }]);
    expect(openWindow(r, t('2026-12-08T07:59:59Z'))).toBeDefined();
    expect(openWindow(r, t('2026-12-08T08:00:00Z'))).toBeUndefined();
  });
});

describe('findConflict (capacity check)', () => {
  const day = { startsAt: t('2026-12-07T08:00:00Z'), endsAt: t('2026-12-07T16:00:00Z') };
  const booked = (id: string, heldGpus: number, times: Booked['times'], visible = true): Booked => ({ id, name: id, visible, teamId: 'team', heldGpus, times });

  it('fits while the sum stays within capacity, side by side or one after the other', () => {
    expect(findConflict({ heldGpus: 8, times: day }, [booked('a', 8, day)], 16)).toBeNull();
    expect(findConflict({ heldGpus: 16, times: day }, [booked('a', 16, { startsAt: day.endsAt, endsAt: day.endsAt + H })], 16)).toBeNull();
  });

  it('names the reservations open in the first stretch over capacity, and that stretch', () => {
    const a = booked('a', 8, { startsAt: t('2026-12-07T06:00:00Z'), endsAt: t('2026-12-07T10:00:00Z') });
    const b = booked('b', 4, { startsAt: t('2026-12-07T09:00:00Z'), endsAt: t('2026-12-07T20:00:00Z') });
    const c = findConflict({ heldGpus: 8, times: day }, [a, b], 16)!;
    expect(c.with.map((x) => x.id)).toEqual(['a', 'b']);
    expect(new Date(c.window.start).toISOString()).toBe('2026-12-07T09:00:00.000Z');
    expect(new Date(c.window.end).toISOString()).toBe('2026-12-07T10:00:00.000Z');
    expect(c.wanted).toBe(20);
  });

  it('checks every window of a recurring reservation against a one-off on a later day', () => {
    const daily = { startsAt: t('2026-12-07T00:00:00Z'), endsAt: t('2026-12-14T00:00:00Z'), cron: '0 8 * * *', timeZone: 'UTC', durationMinutes: 120 };
    const thursday = booked('thu', 10, { startsAt: t('2026-12-10T09:00:00Z'), endsAt: t('2026-12-10T11:00:00Z') });
    const c = findConflict({ heldGpus: 8, times: daily }, [thursday], 16)!;
    expect(new Date(c.window.start).toISOString()).toBe('2026-12-10T09:00:00.000Z');
    expect(new Date(c.window.end).toISOString()).toBe('2026-12-10T10:00:00.000Z');
  });
});
