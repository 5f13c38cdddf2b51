import { CronExpressionParser } from 'cron-parser';

/** What decides when a reservation holds its GPUs. Times in ms since the epoch. */
export interface ReservationTimes {
  startsAt: number;
  endsAt: number;
  /** Recurring: a window of `durationMinutes` at each fire of `cron` in `timeZone` in [startsAt, endsAt). */
  cron?: string | null;
  timeZone?: string | null;
  durationMinutes?: number | null;
}

export interface Window {
  start: number;
  end: number;
}

/** The most windows one reservation may have in all (a recurring one is refused above it). */
export const MAX_WINDOWS = 2_000;

/**
 * The reservation's windows that overlap [from, to), in order, at most `max` of them. A one-off
 * reservation has one window; a recurring one a window at each fire of its cron (in its zone)
 * at or after `startsAt` and before `endsAt`, each `durationMinutes` long.
 */
export function windowsOf(r: ReservationTimes, from: number, to: number, max = MAX_WINDOWS): Window[] {
  if (!r.cron) return r.startsAt < to && r.endsAt > from ? [{ start: r.startsAt, end: r.endsAt }] : [];
  const length = (r.durationMinutes ?? 0) * 60_000;
  // A window that started before `from` may still be open at `from`.
  const first = Math.max(r.startsAt, from - length + 1);
  const last = Math.min(r.endsAt, to);
  if (first >= last) return [];
  const it = CronExpressionParser.parse(r.cron.trim(), { currentDate: new Date(first - 1), tz: r.timeZone ?? 'UTC' });
  const out: Window[] = [];
  while (out.length < max) {
    let fire: number;
    try {
      fire = it.next().getTime();
    } catch {
      break; // the cron has no later fire
    }
    if (fire >= last) break;
    out.push({ start: fire, end: fire + length });
  }
  return out;
}

/** Whether every window of a recurring reservation fits `max` (false: refuse it as too many). */
export function countWindows(r: ReservationTimes, max = MAX_WINDOWS): number {
  return windowsOf(r, r.startsAt, r.endsAt, max + 1).length;
}

/** The window open at `now`, if any. */
export function openWindow(r: ReservationTimes, now: number): Window | undefined {
  return windowsOf(r, now, now + 1, 1)[0];
}

export interface Booked {
  id: string;
  name: string;
  /** Same tenant as the caller: its id and name may be shown; otherwise only that one exists. */
  visible: boolean;
  teamId: string;
  heldGpus: number;
  times: ReservationTimes;
}

export interface CapacityConflict {
  /** The stretch of time over capacity (the first found). */
  window: Window;
  /** GPUs asked for there, all reservations counted, and the model's capacity. */
  wanted: number;
  capacity: number;
  /** The other reservations open in that stretch. */
  with: Booked[];
}

/**
 * The capacity check: the new reservation's windows against every booked window of the same
 * model. Over any stretch where the GPUs held would pass `capacity`, the first such stretch is
 * the conflict (with the reservations that share it); null when everything fits.
 */
export function findConflict(candidate: { heldGpus: number; times: ReservationTimes }, booked: Booked[], capacity: number): CapacityConflict | null {
  const mine = windowsOf(candidate.times, candidate.times.startsAt, candidate.times.endsAt);
  for (const w of mine) {
    const open: { start: number; end: number; b: Booked }[] = [];
    for (const b of booked)
      for (const x of windowsOf(b.times, w.start, w.end)) open.push({ start: Math.max(x.start, w.start), end: Math.min(x.end, w.end), b });
    // Sweep the boundaries inside w: the held total is constant between two of them.
    const cuts = [...new Set([w.start, ...open.flatMap((o) => [o.start, o.end])])].filter((t) => t >= w.start && t < w.end).sort((a, b) => a - b);
    for (let i = 0; i < cuts.length; i++) {
      const t = cuts[i]!;
      const here = open.filter((o) => o.start <= t && o.end > t);
      const wanted = candidate.heldGpus + here.reduce((s, o) => s + o.b.heldGpus, 0);
      if (wanted <= capacity) continue;
      // The stretch: from t until the set of open reservations changes.
      const next = cuts.slice(i + 1).find((c) => open.some((o) => o.start === c || o.end === c)) ?? w.end;
      const with_ = [...new Map(here.map((o) => [o.b.id, o.b])).values()];
      return { window: { start: t, end: Math.min(next, w.end) }, wanted, capacity, with: with_ };
    }
  }
  return null;
}
