import { z } from 'zod';

/** Suspend windows: a recurring suspend or resume of a team (jobId absent) or of one job. */
export const ZScheduleAction = z.enum(['suspend', 'resume']);

export const ZScheduleCreate = z
  .object({
    action: ZScheduleAction,
    /** Five fields: minute hour day-of-month month day-of-week, e.g. `0 18 * * 1-5`. */
    cron: z.string().min(9).max(120),
    /** IANA time zone the cron is read in, e.g. `Europe/Berlin`. */
    timeZone: z.string().min(1).max(64),
    /** One job of the team; absent = the whole team. */
    jobId: z.string().max(64).optional(),
  })
  .strict();
export type ScheduleCreate = z.input<typeof ZScheduleCreate>;

export const ZSchedule = z.object({
  id: z.string(),
  teamId: z.string(),
  jobId: z.string().nullable(),
  action: ZScheduleAction,
  cron: z.string(),
  timeZone: z.string(),
  lastRunAt: z.string().nullable(),
  createdAt: z.string(),
});
export type Schedule = z.infer<typeof ZSchedule>;

export const ZScheduleList = z.object({ items: z.array(ZSchedule) });
export type ScheduleList = z.infer<typeof ZScheduleList>;
