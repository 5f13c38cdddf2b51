import { Injectable } from '@nestjs/common';
import type { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';
import type { HistoryRow, InventoryRow } from './planner-inputs';

/** The most jobs a history workload reads (the generator's cap). */
export const HISTORY_MAX_JOBS = 50_000;

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

  /**
   * The job history of a `history` workload: jobs submitted since `since`, of the scope's tenant
   * (a tenant admin plans with its own tenant's history only; a platform admin with every tenant's).
   */
  history(scope: TenantScope, since: Date): Promise<HistoryRow[]> {
    return this.prisma.client.job.findMany({
      where: { AND: [scopeWhere(scope, 'team-rows'), { createdAt: { gte: since } }] },
      select: {
        id: true,
        teamId: true,
        state: true,
        priority: true,
        replicas: true,
        resources: true,
        durationSeconds: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
      },
      orderBy: { createdAt: 'asc' },
      take: HISTORY_MAX_JOBS,
    });
  }

  /** The live inventory of an `inventory` cluster (the hardware is shared: every node, whoever asks). */
  inventory(): Promise<InventoryRow[]> {
    return this.prisma.client.node.findMany({
      select: {
        name: true,
        cpuMilli: true,
        memoryMiB: true,
        leaf: { select: { name: true, spine: { select: { name: true } } } },
        gpus: { select: { model: true } },
      },
      orderBy: { name: 'asc' },
    });
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

  /**
   * The worker: progress of a running run; returns whether a cancel was asked meanwhile. Only a
   * run still `running` is written: a write still in flight when the run ends leaves its end's
   * progress (1 for a success) as it is.
   */
  async progress(id: string, progress: number): Promise<boolean> {
    const written = await this.prisma.client.plannerRun.updateMany({ where: { AND: [{ id }, { status: 'running' }] }, data: { progress } });
    if (written.count === 0) return false;
    const row = await this.prisma.client.plannerRun.findUnique({ where: { id }, select: { cancelRequested: true } });
    return row?.cancelRequested ?? false;
  }

  /** The worker: the end of a run (only a live run ends). */
  finish(id: string, data: { status: 'succeeded' | 'failed' | 'cancelled'; result?: Prisma.InputJsonValue; error?: string }) {
    return this.prisma.client.plannerRun.updateMany({
      where: { AND: [{ id }, { status: { in: ['queued', 'running'] } }] },
      data: { ...data, progress: data.status === 'succeeded' ? 1 : undefined, finishedAt: new Date() },
    });
  }
}
