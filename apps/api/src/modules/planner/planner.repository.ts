import { Injectable } from '@nestjs/common';
import type { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';

/**
 * Planner runs. A tenant admin's runs carry its tenant and are read through its scope; a
 * platform admin's runs have no tenant. The worker's methods (by id, from the queue) act for the
 * system.
 */
@Injectable()
export class PlannerRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(scope: TenantScope, data: { createdByKeyId: string; spec: Prisma.InputJsonValue; policies: string[] }) {
    // a platform admin's run has no tenant
    return this.prisma.client.plannerRun.create({ data: { tenantId: scopeWhere(scope, 'tenant-rows').tenantId ?? null, ...data } });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.client.plannerRun.findFirst({ where: { AND: [scopeWhere(scope, 'tenant-rows'), { id }] } });
  }

  list(scope: TenantScope) {
    return this.prisma.client.plannerRun.findMany({
      where: scopeWhere(scope, 'tenant-rows'),
      orderBy: { createdAt: 'desc' },
      take: 50,
      omit: { result: true, spec: true },
    });
  }

  /** Asks a queued or running run to stop; true when it was still live. */
  async requestCancel(scope: TenantScope, id: string): Promise<boolean> {
    const r = await this.prisma.client.plannerRun.updateMany({
      where: { AND: [scopeWhere(scope, 'tenant-rows'), { id }, { status: { in: ['queued', 'running'] } }] },
      data: { cancelRequested: true },
    });
    return r.count === 1;
  }

  /** The worker: a run by id (system access: the queue names it). */
  byId(id: string) {
    return this.prisma.client.plannerRun.findUnique({ where: { id } });
  }

  /**
   * The worker: queued -> running. A run already `running` is claimed again: BullMQ hands a job
   * out again only when the worker that had it stopped (its thread died with it).
   */
  async claim(id: string): Promise<boolean> {
    const r = await this.prisma.client.plannerRun.updateMany({
      where: { AND: [{ id }, { status: { in: ['queued', 'running'] } }, { cancelRequested: false }] },
      data: { status: 'running', startedAt: new Date(), progress: 0 },
    });
    return r.count === 1;
  }

  /** The worker: progress of a running run; returns whether a cancel was asked meanwhile. */
  async progress(id: string, progress: number): Promise<boolean> {
    const row = await this.prisma.client.plannerRun.update({ where: { id }, data: { progress }, select: { cancelRequested: true } });
    return row.cancelRequested;
  }

  /** The worker: the end of a run (only a live run ends). */
  finish(id: string, data: { status: 'succeeded' | 'failed' | 'cancelled'; result?: Prisma.InputJsonValue; error?: string }) {
    return this.prisma.client.plannerRun.updateMany({
      where: { AND: [{ id }, { status: { in: ['queued', 'running'] } }] },
      data: { ...data, progress: data.status === 'succeeded' ? 1 : undefined, finishedAt: new Date() },
    });
  }
}
