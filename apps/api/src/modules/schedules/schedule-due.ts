import { CronExpressionParser } from 'cron-parser';

/** Why a cron expression is not accepted, or null when it is (exactly five fields). */
export function cronProblem(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `must have 5 fields (minute hour day-of-month month day-of-week), has ${fields.length}`;
  try {
    CronExpressionParser.parse(cron.trim(), { tz: 'UTC' });
    return null;
  } catch (e) {
    return `is not a valid cron expression: ${(e as Error).message}`;
  }
}

/** Why a time zone is not accepted, or null when it is a zone this runtime knows (IANA). */
export function timeZoneProblem(timeZone: string): string | null {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
    return null;
  } catch {
    return `unknown time zone "${timeZone}" (use an IANA name such as Europe/Berlin)`;
  }
}

/** The latest fire time of `cron` in `timeZone` at or before `now`. */
export function previousFire(cron: string, timeZone: string, now: Date): Date {
  // prev() is strictly before currentDate: step one millisecond on so a fire at `now` counts.
  return CronExpressionParser.parse(cron.trim(), { currentDate: new Date(now.getTime() + 1), tz: timeZone })
    .prev()
    .toDate();
}

/**
 * The fire time a schedule owes now, or null: its previous fire time (in its zone) when that is
 * after the last one it ran (or, never run, after it was created). Missed fires collapse into one.
 */
export function dueFireTime(s: { cron: string; timeZone: string; lastRunAt: Date | null; createdAt: Date }, now: Date): Date | null {
  const fire = previousFire(s.cron, s.timeZone, now);
  const since = s.lastRunAt ?? s.createdAt;
  return fire.getTime() > since.getTime() ? fire : null;
}
