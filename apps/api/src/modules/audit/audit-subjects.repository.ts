import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../common/prisma.service';

/** The fields of one changed thing, by the name the Audit page shows; values plain JSON (numbers, strings, ISO times, lists). */
export type Snapshot = Record<string, unknown>;

/** Plain JSON of a column value: Prisma decimals as numbers, times as ISO strings. */
function plain(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && 'toNumber' in v && typeof (v as { toNumber: unknown }).toNumber === 'function') return (v as { toNumber(): number }).toNumber();
  return v;
}

function snapshotOf(row: Record<string, unknown> | null): Snapshot | null {
  return row && Object.fromEntries(Object.entries(row).map(([k, v]) => [k, plain(v)]));
}

/** What a subject's fields are read as (secret columns, such as key hashes, are never selected). */
type Reader = (db: PrismaService['client'], id: string) => Promise<Snapshot | null>;

const QUOTA_FIELDS = ['guaranteed', 'limit', 'gpuHourBudget', 'budgetPolicy', 'maxGuaranteed', 'maxLimit'] as const;

const READERS: Record<string, Reader> = {
  // a team's quotas, one field per flavour and setting: `limit` for the all-models row, `A100-80GB limit` for one model
  teamQuotas: async (db, id) => {
    const rows = await db.quota.findMany({ where: { teamId: id } });
    return Object.fromEntries(rows.flatMap((q) => QUOTA_FIELDS.map((f) => [`${q.gpuModel === '*' ? '' : `${q.gpuModel} `}${f}`, plain(q[f])])));
  },
  tenant: async (db, id) => snapshotOf(await db.tenant.findUnique({ where: { id }, select: { name: true, gpuTotal: true } })),
  endpoint: async (db, id) =>
    snapshotOf(
      await db.endpoint.findUnique({
        where: { id },
        select: {
          name: true,
          model: true,
          resources: true,
          minReplicas: true,
          maxReplicas: true,
          targetConcurrency: true,
          scaleToZeroAfterSeconds: true,
          warmPool: true,
          manualReplicas: true,
          manualUntil: true,
          deletedAt: true,
        },
      }),
    ),
  node: async (db, id) =>
    snapshotOf(await db.node.findUnique({ where: { id }, select: { state: true, stateReason: true, persona: true, personaTarget: true, powerState: true } })),
  gpu: async (db, id) => {
    const gpu = await db.gpu.findUnique({
      where: { id },
      select: { mode: true, schedulable: true, migTarget: true, instances: { select: { profile: true, start: true }, orderBy: { start: 'asc' } } },
    });
    if (!gpu) return null;
    const { instances, ...rest } = gpu;
    return { ...snapshotOf(rest), migLayout: instances.map((i) => i.profile) };
  },
  apiKey: async (db, id) =>
    snapshotOf(await db.apiKey.findUnique({ where: { id }, select: { name: true, role: true, scopes: true, expiresAt: true, revokedAt: true } })),
  reservation: async (db, id) =>
    snapshotOf(
      await db.reservation.findUnique({
        where: { id },
        select: { name: true, gpuModel: true, gpus: true, nodes: true, startsAt: true, endsAt: true, cron: true, timeZone: true, durationMinutes: true },
      }),
    ),
  job: async (db, id) => snapshotOf(await db.job.findUnique({ where: { id }, select: { state: true, priority: true } })),
  schedule: async (db, id) =>
    snapshotOf(await db.suspendSchedule.findUnique({ where: { id }, select: { action: true, cron: true, timeZone: true, jobId: true } })),
  lease: async (db, id) => snapshotOf(await db.bareMetalLease.findUnique({ where: { id }, select: { state: true, stateReason: true, count: true } })),
};

/**
 * Which subject an audited route changes, by its route pattern (the `:id` it names). A new
 * update route under one of these prefixes is covered without a line here.
 */
const SUBJECT_ROUTES: [RegExp, keyof typeof READERS][] = [
  [/^\/v1\/teams\/:id\/quotas$/, 'teamQuotas'],
  [/^\/v1\/tenants\/:id\/quota$/, 'tenant'],
  [/^\/v1\/endpoints\/:id(\/(?!invoke$)[^/]+)?$/, 'endpoint'],
  [/^\/v1\/nodes\/:id(\/[^/]+)?$/, 'node'],
  [/^\/v1\/gpus\/:id(\/[^/]+)?$/, 'gpu'],
  [/^\/v1\/api-keys\/:id(\/[^/]+)?$/, 'apiKey'],
  [/^\/v1\/reservations\/:id(\/[^/]+)?$/, 'reservation'],
  [/^\/v1\/jobs\/:id\/(suspend|resume|cancel)$/, 'job'],
  [/^\/v1\/schedules\/:id$/, 'schedule'],
  [/^\/v1\/bare-metal\/leases\/:id(\/[^/]+)?$/, 'lease'],
];

/** The subject an audited route changes, or undefined when it changes none the audit compares (a create, an invoke). */
export function subjectOfRoute(route: string): keyof typeof READERS | undefined {
  return SUBJECT_ROUTES.find(([re]) => re.test(route))?.[1];
}

/**
 * Reads the subject of an audited change (its fields before and after the change) by the id its
 * route names. The read happens around the handler, which checks the caller's scope itself; the
 * snapshot is kept only when the handler succeeded, and goes into an entry of the caller's tenant.
 */
@Injectable()
export class AuditSubjectsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async snapshot(subject: keyof typeof READERS, id: string): Promise<Snapshot | null> {
    if (id.length > 64) return null;
    return READERS[subject](this.prisma.client, id);
  }
}
