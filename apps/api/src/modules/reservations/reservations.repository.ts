import { Injectable } from '@nestjs/common';
import type { Prisma, Reservation } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';

export type ReservationRow = Reservation;

export interface NewReservation {
  teamId: string;
  name: string;
  gpuModel: string;
  gpus: number | null;
  nodes: number | null;
  startsAt: Date;
  endsAt: Date;
  cron: string | null;
  timeZone: string | null;
  durationMinutes: number | null;
}

/** Reservations: read and changed through the caller's tenant scope; the scheduling cycle reads all. */
@Injectable()
export class ReservationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Creates the reservation if `check` finds no conflict with the reservations of its model that
   * overlap its span (every tenant's: capacity is shared), under a per-model advisory lock so two
   * concurrent creates cannot both fit the last GPUs. Returns the row, or the conflict.
   */
  async create<C>(
    scope: TenantScope,
    tenantId: string,
    data: NewReservation,
    check: (booked: ReservationRow[]) => C | null,
  ): Promise<{ row: ReservationRow } | { conflict: C }> {
    assertCovers(scope, { tenantId, teamId: data.teamId }, `team ${data.teamId}`);
    return this.prisma.client.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${'reservation-model:' + data.gpuModel}))`;
      const booked = await tx.reservation.findMany({
        where: { gpuModel: data.gpuModel, startsAt: { lt: data.endsAt }, endsAt: { gt: data.startsAt } },
        orderBy: { startsAt: 'asc' },
      });
      const conflict = check(booked);
      if (conflict !== null) return { conflict };
      return { row: await tx.reservation.create({ data: { tenantId, ...data } }) };
    });
  }

  /**
   * Rewrites the reservation if `check` finds no conflict with the other reservations of its
   * model (itself left out), under the same per-model lock as a create. Null when it is not the caller's.
   */
  async update<C>(
    scope: TenantScope,
    id: string,
    data: NewReservation,
    check: (booked: ReservationRow[]) => C | null,
  ): Promise<{ row: ReservationRow } | { conflict: C } | null> {
    return this.prisma.client.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${'reservation-model:' + data.gpuModel}))`;
      const booked = await tx.reservation.findMany({
        where: { id: { not: id }, gpuModel: data.gpuModel, startsAt: { lt: data.endsAt }, endsAt: { gt: data.startsAt } },
        orderBy: { startsAt: 'asc' },
      });
      const conflict = check(booked);
      if (conflict !== null) return { conflict };
      const mine = { AND: [scopeWhere(scope, 'team-rows'), { id, teamId: data.teamId, gpuModel: data.gpuModel }] };
      const { teamId: _team, gpuModel: _model, ...changes } = data;
      const r = await tx.reservation.updateMany({ where: mine, data: changes });
      if (r.count !== 1) return null;
      return { row: await tx.reservation.findFirstOrThrow({ where: mine }) };
    });
  }

  list(scope: TenantScope, filter: { gpuModel?: string; teamId?: string; from: Date; to: Date }) {
    const where: Prisma.ReservationWhereInput[] = [scopeWhere(scope, 'team-rows'), { startsAt: { lt: filter.to } }, { endsAt: { gt: filter.from } }];
    if (filter.gpuModel) where.push({ gpuModel: filter.gpuModel });
    if (filter.teamId) where.push({ teamId: filter.teamId });
    return this.prisma.client.reservation.findMany({ where: { AND: where }, orderBy: [{ startsAt: 'asc' }, { id: 'asc' }], take: 500 });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.client.reservation.findFirst({ where: { AND: [scopeWhere(scope, 'team-rows'), { id }] } });
  }

  async remove(scope: TenantScope, id: string): Promise<boolean> {
    const r = await this.prisma.client.reservation.deleteMany({ where: { AND: [scopeWhere(scope, 'team-rows'), { id }] } });
    return r.count === 1;
  }

  /** Every reservation whose span overlaps [from, to) (the scheduling cycle and the worker's tick). */
  spanning(from: Date, to: Date): Promise<ReservationRow[]> {
    // typed SQL: every scheduling cycle with pending work reads it
    return this.prisma.sql.query<ReservationRow>(
      `SELECT id, "tenantId", "teamId", name, "gpuModel", gpus, nodes, "startsAt", "endsAt", cron, "timeZone", "durationMinutes", "createdAt"
       FROM "Reservation" WHERE "startsAt" < $2::timestamp(3) AND "endsAt" > $1::timestamp(3)
       ORDER BY "startsAt", id LIMIT 5000`,
      [from.toISOString(), to.toISOString()],
    );
  }

  /** Team and preemptibility of the jobs holding GPUs (which GPUs a reservation can take over). */
  jobOwners(jobIds: string[]) {
    if (!jobIds.length) return Promise.resolve([]);
    return this.prisma.client.job.findMany({ where: { id: { in: jobIds } }, select: { id: true, teamId: true, preemptible: true, priority: true } });
  }
}
