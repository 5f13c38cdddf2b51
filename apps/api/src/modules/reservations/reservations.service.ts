import { Injectable } from '@nestjs/common';
import type { Reservation, ReservationList, ZReservationCreate, ZReservationListQuery, ZReservationUpdate } from '@gantry/contracts';
import type { z } from 'zod';
import { DomainError, notFound, type ErrorDetail } from '../../common/errors';
import { scopeOf, type Principal } from '../../common/principal';
import type { TenantScope } from '../../common/tenant-scope';
import { QuotasRepository } from '../quotas/quotas.repository';
import { checkFitsQuota } from '../quotas/quota-coverage';
import { requireRole } from '../../common/roles';
import { TenantsRepository } from '../tenants/tenants.repository';
import { ClusterRepository } from '../cluster/cluster.repository';
import { QueuesService } from '../../queues/queues.service';
import { cronProblem, timeZoneProblem } from '../schedules/schedule-due';
import { ReservationsRepository, type NewReservation, type ReservationRow } from './reservations.repository';
import { MAX_WINDOWS, findConflict, openWindow, windowsOf, type Booked, type CapacityConflict, type ReservationTimes } from './reservation-windows';

const DAY = 86_400_000;
/** The longest span a reservation may cover (a recurring one: from its first to its last window). */
export const MAX_SPAN_DAYS = 366;

/** Capacity per GPU model: what reservations are checked against. */
export interface ModelCapacity {
  gpus: number;
  gpusPerNode: number;
}

/** Reservations of GPUs or whole nodes for a window, one-off or recurring (docs/reservations.md). */
@Injectable()
export class ReservationsService {
  constructor(
    private readonly repo: ReservationsRepository,
    private readonly teams: TenantsRepository,
    private readonly cluster: ClusterRepository,
    private readonly quotas: QuotasRepository,
    private readonly queues: QueuesService,
  ) {}

  async create(p: Principal, body: z.output<typeof ZReservationCreate>, now = new Date()): Promise<Reservation> {
    const scope = scopeOf(p);
    const team = await this.teams.findTeam(scope, body.teamId);
    if (!team) throw notFound('team', body.teamId);
    this.mayChange(p, team.id, 'reserves capacity only for its own team');
    const { data, check, capacity } = await this.prepare(scope, team, body, now);
    const r = await this.repo.create(scope, team.tenantId, data, check);
    if ('conflict' in r) throw r.conflict;
    // The next cycle keeps the new hold's GPUs from work that could not leave them in time.
    await this.queues.requestSchedule('reservation created');
    return present(r.row, capacity, now.getTime(), now.getTime() + 7 * DAY);
  }

  /**
   * Changes a reservation's name, size or times: the same checks as a create, the capacity swept
   * against every other reservation of the model (not itself), the same permissions as a delete.
   */
  async update(p: Principal, id: string, body: z.output<typeof ZReservationUpdate>, now = new Date()): Promise<Reservation> {
    const scope = scopeOf(p);
    const row = await this.repo.find(scope, id);
    if (!row) throw notFound('reservation', id);
    this.mayChange(p, row.teamId, 'changes only its own team’s reservations');
    const resized = body.gpus !== undefined || body.nodes !== undefined;
    const recurrence = body.recurrence === undefined ? recurrenceOf(row) : body.recurrence;
    const merged: z.output<typeof ZReservationCreate> = {
      teamId: row.teamId,
      name: body.name ?? row.name,
      gpuModel: row.gpuModel,
      gpus: resized ? body.gpus : (row.gpus ?? undefined),
      nodes: resized ? body.nodes : (row.nodes ?? undefined),
      startsAt: body.startsAt ?? row.startsAt.toISOString(),
      endsAt: body.endsAt ?? row.endsAt.toISOString(),
      ...(recurrence ? { recurrence } : {}),
    };
    const { data, check, capacity } = await this.prepare(scope, { id: row.teamId, tenantId: row.tenantId }, merged, now);
    const r = await this.repo.update(scope, id, data, check);
    if (r === null) throw notFound('reservation', id);
    if ('conflict' in r) throw r.conflict;
    await this.queues.requestSchedule('reservation changed');
    return present(r.row, capacity, now.getTime(), now.getTime() + 7 * DAY);
  }

  /** Who may create, change or delete a team's reservation: its team admin, its tenant's admin, the platform admin. */
  private mayChange(p: Principal, teamId: string, teamAdminRule: string): void {
    requireRole(p, 'tenant-admin', 'team-admin');
    if (p.role === 'team-admin' && p.teamId !== teamId) throw new DomainError('forbidden', `a team admin ${teamAdminRule}`);
  }

  /**
   * Every check of a reservation to be written (create or edit): its shape (400), the model's
   * capacity (409 when larger than the cluster), the team's quota (409 `quota_exceeded` when larger
   * than the covering limit: a team cannot reserve what it could never use), and the capacity
   * check against the other reservations of the model, run by the repository under its lock.
   */
  private async prepare(scope: TenantScope, team: { id: string; tenantId: string }, body: z.output<typeof ZReservationCreate>, now: Date) {
    const times = this.checkShape(body, now);
    const capacity = (await this.capacity([body.gpuModel])).get(body.gpuModel);
    if (!capacity || capacity.gpus === 0) {
      throw new DomainError('validation_failed', `invalid gpuModel`, [{ field: 'gpuModel', problem: `the cluster has no ${body.gpuModel} GPUs` }]);
    }
    const heldGpus = body.gpus ?? (body.nodes ?? 0) * capacity.gpusPerNode;
    const field = body.gpus !== undefined ? 'gpus' : 'nodes';
    if (heldGpus > capacity.gpus) {
      throw new DomainError('conflict', `${heldGpus} ${body.gpuModel} GPUs is more than the cluster has (${capacity.gpus})`, [
        { field, problem: `at most ${body.gpus !== undefined ? capacity.gpus : Math.floor(capacity.gpus / capacity.gpusPerNode)}` },
      ]);
    }
    checkFitsQuota(
      await this.quotas.bounds(scope, team.id, body.gpuModel),
      { gpuModel: body.gpuModel, units: heldGpus, mayBorrow: true, what: `a reservation of ${heldGpus} ${body.gpuModel} GPUs` },
      { size: field, model: 'gpuModel' },
    );
    const data: NewReservation = {
      teamId: team.id,
      name: body.name,
      gpuModel: body.gpuModel,
      gpus: body.gpus ?? null,
      nodes: body.nodes ?? null,
      startsAt: new Date(times.startsAt),
      endsAt: new Date(times.endsAt),
      cron: times.cron ?? null,
      timeZone: times.timeZone ?? null,
      durationMinutes: times.durationMinutes ?? null,
    };
    const check = (booked: ReservationRow[]) => {
      const c = findConflict(
        { heldGpus, times },
        booked.map((b) => toBooked(b, team.tenantId, capacity.gpusPerNode)),
        capacity.gpus,
      );
      return c ? conflictError(c, body.gpuModel, heldGpus) : null;
    };
    return { data, check, capacity };
  }

  async list(p: Principal, q: z.output<typeof ZReservationListQuery>, now = new Date()): Promise<ReservationList> {
    const scope = scopeOf(p);
    const from = q.from ? Date.parse(q.from) : now.getTime();
    const to = q.to ? Date.parse(q.to) : from + 7 * DAY;
    const problems: ErrorDetail[] = [];
    if (to <= from) problems.push({ field: 'to', problem: 'must be after from' });
    else if (to - from > 31 * DAY) problems.push({ field: 'to', problem: 'the range may span at most 31 days' });
    if (problems.length) throw new DomainError('validation_failed', 'invalid to', problems);
    if (q.teamId && !(await this.teams.findTeam(scope, q.teamId))) throw notFound('team', q.teamId);
    const rows = await this.repo.list(scope, { gpuModel: q.gpuModel, teamId: q.teamId, from: new Date(from), to: new Date(to) });
    const caps = await this.capacity();
    const items = rows.map((r) => present(r, caps.get(r.gpuModel) ?? { gpus: 0, gpusPerNode: 0 }, from, to, now.getTime())).filter((r) => r.windows.length > 0);
    return { items, capacity: [...caps.entries()].map(([gpuModel, c]) => ({ gpuModel, gpus: c.gpus, gpusPerNode: c.gpusPerNode })) };
  }

  async get(p: Principal, id: string, now = new Date()): Promise<Reservation> {
    const row = await this.repo.find(scopeOf(p), id);
    if (!row) throw notFound('reservation', id);
    const cap = (await this.capacity([row.gpuModel])).get(row.gpuModel) ?? { gpus: 0, gpusPerNode: 0 };
    return present(row, cap, now.getTime(), now.getTime() + 7 * DAY);
  }

  async remove(p: Principal, id: string): Promise<void> {
    const scope = scopeOf(p);
    const row = await this.repo.find(scope, id);
    if (!row) throw notFound('reservation', id);
    this.mayChange(p, row.teamId, 'deletes only its own team’s reservations');
    if (!(await this.repo.remove(scope, id))) throw notFound('reservation', id);
    await this.queues.requestSchedule('reservation deleted');
  }

  /** GPUs per model and the most GPUs of the model on one node (the size of a whole node). */
  async capacity(models?: string[]): Promise<Map<string, ModelCapacity>> {
    const [perNode, byModel] = await Promise.all([this.cluster.maxGpusPerNodeByModel(), this.cluster.capacityByModel()]);
    const out = new Map<string, ModelCapacity>();
    for (const m of byModel) if (!models || models.includes(m.gpuModel)) out.set(m.gpuModel, { gpus: m.total, gpusPerNode: perNode.get(m.gpuModel) ?? 0 });
    for (const m of models ?? []) if (!out.has(m)) out.set(m, { gpus: 0, gpusPerNode: 0 });
    return out;
  }

  /** 400 naming the field for what no capacity check could fix. */
  private checkShape(body: z.output<typeof ZReservationCreate>, now: Date): ReservationTimes {
    const problems: ErrorDetail[] = [];
    if ((body.gpus === undefined) === (body.nodes === undefined)) problems.push({ field: 'gpus', problem: 'give exactly one of gpus and nodes' });
    const startsAt = Date.parse(body.startsAt);
    const endsAt = Date.parse(body.endsAt);
    if (endsAt <= startsAt) problems.push({ field: 'endsAt', problem: 'must be after startsAt' });
    if (endsAt <= now.getTime()) problems.push({ field: 'endsAt', problem: 'is in the past' });
    if (endsAt - startsAt > MAX_SPAN_DAYS * DAY) problems.push({ field: 'endsAt', problem: `a reservation may span at most ${MAX_SPAN_DAYS} days` });
    const rec = body.recurrence;
    if (rec) {
      const c = cronProblem(rec.cron);
      if (c) problems.push({ field: 'recurrence.cron', problem: c });
      const tz = timeZoneProblem(rec.timeZone);
      if (tz) problems.push({ field: 'recurrence.timeZone', problem: tz });
    }
    const times: ReservationTimes = {
      startsAt,
      endsAt,
      cron: rec?.cron.trim() ?? null,
      timeZone: rec?.timeZone ?? null,
      durationMinutes: rec?.durationMinutes ?? null,
    };
    if (!problems.length && rec) {
      const all = windowsOf(times, startsAt, endsAt, MAX_WINDOWS + 1);
      if (!all.length) problems.push({ field: 'recurrence.cron', problem: 'never fires between startsAt and endsAt' });
      if (all.length > MAX_WINDOWS) problems.push({ field: 'recurrence.cron', problem: `fires more than ${MAX_WINDOWS} times between startsAt and endsAt` });
      if (all.some((w, i) => i > 0 && all[i - 1]!.end > w.start)) {
        problems.push({ field: 'recurrence.durationMinutes', problem: 'is longer than the time between two fires: windows would overlap' });
      }
    }
    if (problems.length) throw new DomainError('validation_failed', `invalid ${[...new Set(problems.map((x) => x.field))].join(', ')}`, problems);
    return times;
  }
}

function recurrenceOf(r: ReservationRow) {
  return r.cron && r.timeZone && r.durationMinutes ? { cron: r.cron, timeZone: r.timeZone, durationMinutes: r.durationMinutes } : null;
}

function timesOf(r: ReservationRow): ReservationTimes {
  return { startsAt: r.startsAt.getTime(), endsAt: r.endsAt.getTime(), cron: r.cron, timeZone: r.timeZone, durationMinutes: r.durationMinutes };
}

export function heldGpusOf(r: Pick<ReservationRow, 'gpus' | 'nodes'>, gpusPerNode: number): number {
  return r.gpus ?? (r.nodes ?? 0) * gpusPerNode;
}

function toBooked(r: ReservationRow, tenantId: string, gpusPerNode: number): Booked {
  return { id: r.id, name: r.name, visible: r.tenantId === tenantId, teamId: r.teamId, heldGpus: heldGpusOf(r, gpusPerNode), times: timesOf(r) };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** 409 naming the stretch over capacity and the reservations open in it (another tenant's: only that one exists). */
function conflictError(c: CapacityConflict, model: string, heldGpus: number): DomainError {
  const names = c.with.map((b) =>
    b.visible ? `reservation ${b.id} "${b.name}" (team ${b.teamId}, ${b.heldGpus} GPUs)` : `a reservation of another tenant (${b.heldGpus} GPUs)`,
  );
  return new DomainError(
    'conflict',
    `${heldGpus} ${model} GPUs from ${iso(c.window.start)} to ${iso(c.window.end)} would make ${c.wanted} reserved of ${c.capacity}: conflicts with ${names.join(', ')}`,
    [
      { field: 'window', problem: `${iso(c.window.start)}/${iso(c.window.end)}` },
      ...c.with.map((b) => ({ field: 'conflictsWith', problem: b.visible ? b.id : 'another tenant' })),
    ],
  );
}

function present(r: ReservationRow, cap: ModelCapacity, from: number, to: number, now = from): Reservation {
  const t = timesOf(r);
  return {
    id: r.id,
    tenantId: r.tenantId,
    teamId: r.teamId,
    name: r.name,
    gpuModel: r.gpuModel,
    gpus: r.gpus,
    nodes: r.nodes,
    heldGpus: heldGpusOf(r, cap.gpusPerNode),
    startsAt: r.startsAt.toISOString(),
    endsAt: r.endsAt.toISOString(),
    recurrence: recurrenceOf(r),
    windows: windowsOf(t, from, to, 500).map((w) => ({ start: iso(w.start), end: iso(w.end) })),
    active: openWindow(t, now) !== undefined,
    createdAt: r.createdAt.toISOString(),
  };
}
