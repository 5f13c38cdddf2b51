import { z } from 'zod';
import { ZGpuModel } from './cluster';

/**
 * Reservations (docs/reservations.md): a team holds `gpus` GPUs or `nodes` whole nodes of a GPU
 * model for a window. One-off: `startsAt`..`endsAt`. Recurring: a window of `durationMinutes` at
 * each fire of `recurrence.cron` (read in `recurrence.timeZone`) between `startsAt` and `endsAt`.
 */
export const ZReservationRecurrence = z
  .object({
    /** Five fields: minute hour day-of-month month day-of-week, e.g. `0 9 * * 1-5` (09:00 on weekdays). */
    cron: z.string().min(9).max(120),
    /** IANA time zone the cron is read in, e.g. `Asia/Tokyo`. */
    timeZone: z.string().min(1).max(64),
    /** Length of each window. */
    durationMinutes: z.number().int().min(1).max(10_080),
  })
  .strict();

export const ZReservationCreate = z
  .object({
    teamId: z.string().min(1).max(64),
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'must start with a letter or digit and use letters, digits, spaces, ".", "_" or "-"'),
    gpuModel: ZGpuModel,
    /** GPUs of the model held (exactly one of `gpus` and `nodes`). */
    gpus: z.number().int().min(1).max(100_000).optional(),
    /** Whole nodes of the model held (exactly one of `gpus` and `nodes`). */
    nodes: z.number().int().min(1).max(10_000).optional(),
    startsAt: z.iso.datetime({ offset: true }).describe('ISO 8601: the window (or the first possible recurring window) starts'),
    endsAt: z.iso.datetime({ offset: true }).describe('ISO 8601: the window ends (recurring: no window starts at or after it)'),
    recurrence: ZReservationRecurrence.optional(),
  })
  .strict();
export type ReservationCreate = z.input<typeof ZReservationCreate>;

/**
 * An edit (`PATCH /v1/reservations/:id`): the fields given replace the reservation's, checked as
 * a create is (shape, capacity without the reservation itself, the team's quota). `gpus` replaces
 * a `nodes` size and the other way round; `recurrence: null` makes it one-off.
 */
export const ZReservationUpdate = z
  .object({
    name: ZReservationCreate.shape.name.optional(),
    gpus: ZReservationCreate.shape.gpus,
    nodes: ZReservationCreate.shape.nodes,
    startsAt: ZReservationCreate.shape.startsAt.optional(),
    endsAt: ZReservationCreate.shape.endsAt.optional(),
    recurrence: ZReservationRecurrence.nullable().optional(),
  })
  .strict();
export type ReservationUpdate = z.input<typeof ZReservationUpdate>;

export const ZReservationWindow = z.object({ start: z.string(), end: z.string() });
export type ReservationWindow = z.infer<typeof ZReservationWindow>;

export const ZReservation = z.object({
  id: z.string(),
  tenantId: z.string(),
  teamId: z.string(),
  name: z.string(),
  gpuModel: z.string(),
  gpus: z.number().int().nullable(),
  nodes: z.number().int().nullable(),
  /** GPUs the reservation holds in each window (`gpus`, or `nodes` x the model's GPUs per node). */
  heldGpus: z.number().int(),
  startsAt: z.string(),
  endsAt: z.string(),
  recurrence: ZReservationRecurrence.nullable(),
  /** Its windows inside the range asked for (the list's `from`..`to`; a single reservation: the next 7 days). */
  windows: z.array(ZReservationWindow),
  /** A window is open now: the held GPUs are the team's. */
  active: z.boolean(),
  createdAt: z.string(),
});
export type Reservation = z.infer<typeof ZReservation>;

export const ZReservationListQuery = z
  .object({
    gpuModel: ZGpuModel.optional(),
    teamId: z.string().max(64).optional(),
    from: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 start of the range windows are listed for (default: now)'),
    to: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 end of the range (default: `from` plus 7 days; at most 31 days)'),
  })
  .strict();

export const ZReservationList = z.object({
  items: z.array(ZReservation),
  /** Per GPU model of the cluster: its GPUs (what reservations are checked against) and GPUs per node. */
  capacity: z.array(z.object({ gpuModel: z.string(), gpus: z.number().int(), gpusPerNode: z.number().int() })),
});
export type ReservationList = z.infer<typeof ZReservationList>;
