import { Injectable } from '@nestjs/common';
import { Prisma, type Persona } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { prismaEnum } from '../cluster/node-rows';
import { EventsRepository } from '../events/events.repository';
import { layoutKey } from './mig-layout-key';

/** A GPU's MIG layout as the database holds it, with its node. */
export type GpuLayoutRow = Prisma.GpuGetPayload<{
  select: {
    id: true;
    index: true;
    model: true;
    migCapable: true;
    mode: true;
    migTarget: true;
    version: true;
    node: { select: { name: true; persona: true } };
    instances: { select: { profile: true; start: true } };
  };
}>;

/** MIG changes of a GPU: requested (out of scheduling), applied and verified, or abandoned. */
@Injectable()
export class MigChangesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly events: EventsRepository,
  ) {}

  private get db() {
    return this.prisma.client;
  }

  /** Takes the GPU out of scheduling and records the layout being applied. */
  async beginMigChange(gpuId: string, layout: { profile: string; start: number }[], reason: string, now: Date): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: gpuId } });
      const same = JSON.stringify(gpu.migTarget) === JSON.stringify(layout);
      await tx.gpu.update({
        where: { id: gpuId },
        data: {
          schedulable: false,
          migTarget: layout as unknown as Prisma.InputJsonValue,
          ...(same && gpu.migRequestedAt ? {} : { migRequestedAt: now }),
          version: { increment: 1 },
        },
      });
      if (!same) {
        const text = layout.length ? layout.map((e) => `${e.profile}@${e.start}`).join(', ') : 'MIG off';
        await this.events.append(tx, {
          tenantId: null,
          nodeId: gpu.nodeId,
          type: 'gpu.mig.requested',
          message: `GPU ${gpu.index}: MIG layout ${text} requested (${reason}); GPU out of scheduling`,
          data: { gpuId, layout },
        });
      }
    });
  }

  /** Active allocations on a GPU: its whole-GPU holder or the MIG slices in use (by start). */
  gpuAllocations(gpuId: string) {
    return this.db.allocation.findMany({ where: { gpuId, endedAt: null }, select: { jobId: true, migStart: true, migProfile: true, milli: true } });
  }

  /**
   * Stores a verified layout: slices destroyed, slices created, mode, back in scheduling. Under
   * the GPU row lock, refuses (false) when a slice being destroyed holds an allocation.
   */
  commitMigLayout(
    gpuId: string,
    layout: { profile: string; start: number; size: number }[],
    now: Date,
    opts: { whileTarget?: { profile: string; start: number }[] } = {},
  ): Promise<boolean | 'replaced'> {
    return this.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM "Gpu" WHERE id = ${gpuId} FOR UPDATE`;
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: gpuId }, include: { instances: true } });
      // the MIG manager stores what it applied only while that is still the target
      if (opts.whileTarget && (!gpu.migTarget || layoutKey(gpu.migTarget as { profile: string; start: number }[]) !== layoutKey(opts.whileTarget)))
        return 'replaced';
      const keep = (p: string, s: number) => layout.some((e) => e.profile === p && e.start === s);
      const gone = gpu.instances.filter((i) => !keep(i.profile, i.start));
      const busy = await tx.allocation.findMany({ where: { gpuId, endedAt: null }, select: { migStart: true, migProfile: true } });
      if (busy.some((a) => a.migStart === null || gone.some((i) => i.start === a.migStart))) return false;
      if (gone.length) await tx.gpuInstance.deleteMany({ where: { id: { in: gone.map((i) => i.id) } } });
      const fresh = layout.filter((e) => !gpu.instances.some((i) => i.profile === e.profile && i.start === e.start));
      if (fresh.length) await tx.gpuInstance.createMany({ data: fresh.map((e) => ({ gpuId, profile: e.profile, start: e.start, size: e.size })) });
      await tx.gpu.update({
        where: { id: gpuId },
        data: {
          mode: layout.length ? 'mig' : 'whole',
          schedulable: true,
          migTarget: Prisma.DbNull,
          migRequestedAt: null,
          migChangedAt: now,
          version: { increment: 1 },
        },
      });
      const text = layout.length ? layout.map((e) => `${e.profile}@${e.start}`).join(', ') : 'MIG off (whole GPU)';
      await this.events.append(tx, {
        tenantId: null,
        nodeId: gpu.nodeId,
        type: 'gpu.mig.applied',
        message: `GPU ${gpu.index}: MIG layout ${text} applied and verified; back in scheduling`,
        data: { gpuId, layout },
      });
      return true;
    });
  }

  /** Gives up a change (timeout, refusal): the GPU goes back to scheduling with its old layout. */
  async abandonMigChange(gpuId: string, why: string): Promise<void> {
    await this.db.$transaction(async (tx) => {
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: gpuId } });
      await tx.gpu.update({ where: { id: gpuId }, data: { schedulable: true, migTarget: Prisma.DbNull, migRequestedAt: null, version: { increment: 1 } } });
      await this.events.append(tx, {
        tenantId: null,
        nodeId: gpu.nodeId,
        type: 'gpu.mig.abandoned',
        message: `GPU ${gpu.index}: MIG change abandoned: ${why}`,
        data: { gpuId },
      });
    });
  }

  /**
   * Every GPU's MIG layout as the database holds it (compared with the driver's by the MIG
   * reconciler): two statements of typed SQL (GPUs with their node, slices by start), as
   * Prisma's nested read passes one id per GPU as a bind parameter, more than Postgres's 65,535
   * at 80,000 GPUs.
   */
  async gpuLayouts(): Promise<GpuLayoutRow[]> {
    const [gpus, instances] = await Promise.all([
      this.prisma.sql.query<Omit<GpuLayoutRow, 'node' | 'instances'> & { nodeName: string; persona: Persona }>(
        `SELECT g.id, g.index, g.model, g."migCapable", g.mode, g."migTarget", g.version, n.name AS "nodeName", n.persona
         FROM "Gpu" g JOIN "Node" n ON n.id = g."nodeId"`,
      ),
      this.prisma.sql.query<{ gpuId: string; profile: string; start: number }>(`SELECT "gpuId", profile, start FROM "GpuInstance" ORDER BY start`),
    ]);
    const slices = new Map<string, { profile: string; start: number }[]>();
    for (const i of instances) {
      const list = slices.get(i.gpuId);
      if (list) list.push({ profile: i.profile, start: i.start });
      else slices.set(i.gpuId, [{ profile: i.profile, start: i.start }]);
    }
    return gpus.map(({ nodeName, persona, ...g }) => ({ ...g, node: { name: nodeName, persona: prismaEnum(persona) }, instances: slices.get(g.id) ?? [] }));
  }

  /**
   * Stores the cluster's layout as the GPU's slices (what exists) and, when `wanted` is given,
   * starts re-applying it (the GPU out of scheduling until the MIG manager has applied it).
   * Skipped (false) when the GPU changed since `version` was read or a change is in flight.
   */
  async adoptClusterLayout(
    d: {
      gpuId: string;
      version: number;
      existing: { profile: string; start: number; size: number }[];
      wanted: { profile: string; start: number }[] | null;
      why: string;
    },
    now: Date,
  ): Promise<boolean> {
    return this.db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM "Gpu" WHERE id = ${d.gpuId} FOR UPDATE`;
      const gpu = await tx.gpu.findUniqueOrThrow({ where: { id: d.gpuId } });
      if (gpu.version !== d.version || gpu.migTarget !== null) return false;
      await tx.gpuInstance.deleteMany({ where: { gpuId: d.gpuId } });
      if (d.existing.length) await tx.gpuInstance.createMany({ data: d.existing.map((e) => ({ gpuId: d.gpuId, ...e })) });
      await tx.gpu.update({
        where: { id: d.gpuId },
        data: {
          mode: d.existing.length ? 'mig' : gpu.mode === 'mig' ? 'whole' : gpu.mode,
          ...(d.wanted ? { schedulable: false, migTarget: d.wanted as unknown as Prisma.InputJsonValue, migRequestedAt: now } : {}),
          version: { increment: 1 },
        },
      });
      await this.events.append(tx, {
        tenantId: null,
        nodeId: gpu.nodeId,
        type: 'gpu.mig.drift',
        message: `GPU ${gpu.index}: MIG layout differs from the cluster's: ${d.why}${d.wanted ? '; GPU out of scheduling until it is applied' : ''}`,
        data: { gpuId: d.gpuId, existing: d.existing.map(({ profile, start }) => ({ profile, start })), wanted: d.wanted },
      });
      return true;
    });
  }

  /** GPUs with a MIG change in flight (the reconciler re-enqueues them after a restart). */
  gpusWithMigTarget() {
    return this.db.gpu.findMany({ where: { migTarget: { not: Prisma.DbNull } }, select: { id: true, migTarget: true, migRequestedAt: true } });
  }
}
