import { Injectable } from '@nestjs/common';
import type { ScheduleAction } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';

/** Suspend schedules: read and changed through the caller's tenant scope; the worker's tick reads all. */
@Injectable()
export class SchedulesRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(
    scope: TenantScope & { kind: 'tenant' },
    data: { teamId: string; jobId: string | null; action: ScheduleAction; cron: string; timeZone: string },
  ) {
    assertCovers(scope, { tenantId: scope.tenantId, teamId: data.teamId }, `team ${data.teamId}`);
    return this.prisma.client.suspendSchedule.create({ data: { tenantId: scope.tenantId, ...data } });
  }

  listOfTeam(scope: TenantScope, teamId: string) {
    return this.prisma.client.suspendSchedule.findMany({
      where: { AND: [scopeWhere(scope, 'team-rows'), { teamId }] },
      orderBy: { createdAt: 'asc' },
      take: 200,
    });
  }

  async remove(scope: TenantScope, id: string): Promise<boolean> {
    const r = await this.prisma.client.suspendSchedule.deleteMany({ where: { AND: [scopeWhere(scope, 'team-rows'), { id }] } });
    return r.count === 1;
  }

  /** Every schedule (the worker's tick; not tenant data reads for a caller). */
  all() {
    return this.prisma.client.suspendSchedule.findMany({ orderBy: { createdAt: 'asc' } });
  }

  /**
   * Claims one fire: moves lastRunAt from what the tick read to the fire time, in one guarded
   * update. Only one worker wins; a second tick sees the new lastRunAt and the fire is not due.
   */
  claim(id: string, readLastRunAt: Date | null, fire: Date) {
    return this.prisma.client.$transaction(async (tx) => {
      const r = await tx.suspendSchedule.updateMany({ where: { AND: [{ id }, { lastRunAt: readLastRunAt }] }, data: { lastRunAt: fire } });
      return r.count === 1;
    });
  }
}
