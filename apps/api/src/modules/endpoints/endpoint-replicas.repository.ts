import { Injectable } from '@nestjs/common';
import type { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { isUniqueViolation } from '../../common/prisma-errors';
import { newId } from '../../common/ids';
import { Abort, takeGpuSlots, type NewAllocation } from '../allocations/gpu-slots';
import { withinQuota, type QuotaGuard } from '../quotas/quota-guard';

const activeReplicas = {
  replicas: { where: { endedAt: null }, orderBy: { replica: 'asc' } },
} satisfies Prisma.EndpointInclude;

export type LiveEndpoint = Prisma.EndpointGetPayload<{ include: typeof activeReplicas }>;

/** Replica work the scheduling cycle places: `missing` more replicas at these free indexes. */
export interface EndpointReplicaWork {
  endpointId: string;
  tenantId: string;
  teamId: string;
  resources: unknown;
  createdAt: Date;
  indexes: number[];
}

/** A placed replica to start: its GPUs as the driver's start request names them. */
export interface StartingReplica {
  id: string;
  endpointId: string;
  replica: number;
  allocations: { gpuId: string; migProfile: string | null; migStart: number | null; milli: number; nodeName: string; gpuIndex: number }[];
}

/**
 * Endpoint replicas as the worker sees them (system-scoped: the scheduling cycle and the
 * autoscaler act for the whole cluster, never for a route).
 */
@Injectable()
export class EndpointReplicasRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Endpoints the autoscaler looks after: live ones, and deleted ones still holding replicas. */
  liveEndpoints(): Promise<LiveEndpoint[]> {
    return this.prisma.client.endpoint.findMany({
      where: { OR: [{ deletedAt: null }, { replicas: { some: { endedAt: null } } }] },
      include: activeReplicas,
      orderBy: { createdAt: 'asc' },
      take: 5000,
    });
  }

  /**
   * Endpoints with fewer active replicas than serving + warm-pool targets. One typed-SQL statement:
   * every scheduling cycle asks (two Prisma queries to compile per cycle, most often for nothing).
   */
  async pendingWork(): Promise<EndpointReplicaWork[]> {
    const eps = await this.prisma.sql.query<{
      id: string;
      tenantId: string;
      teamId: string;
      resources: unknown;
      createdAt: Date;
      wanted: number;
      used: number[];
    }>(
      `SELECT e."id", e."tenantId", e."teamId", e."resources", e."createdAt", e."desiredReplicas" + e."warmPool" AS "wanted",
         COALESCE((SELECT array_agg(r."replica") FROM "EndpointReplica" r WHERE r."endpointId" = e."id" AND r."endedAt" IS NULL), '{}') AS "used"
       FROM "Endpoint" e
       WHERE e."deletedAt" IS NULL AND (e."desiredReplicas" > 0 OR e."warmPool" > 0)
       LIMIT 5000`,
    );
    const out: EndpointReplicaWork[] = [];
    for (const ep of eps) {
      const missing = ep.wanted - ep.used.length;
      if (missing <= 0) continue;
      const used = new Set(ep.used);
      const indexes: number[] = [];
      for (let i = 0; indexes.length < missing; i++) if (!used.has(i)) indexes.push(i);
      out.push({ endpointId: ep.id, tenantId: ep.tenantId, teamId: ep.teamId, resources: ep.resources, createdAt: ep.createdAt, indexes });
    }
    return out;
  }

  /**
   * Commit of one replica, with the same guards as a job (team quota re-checked under its lock,
   * unique GPU slots, share sum under a GPU row lock); besides, the endpoint row is locked and must
   * still want another replica, the replica index must be free (unique active key) and every
   * GPU slot must be free (unique active slot, share sum under a lock). Null when not committed.
   */
  async commitReplica(
    work: { endpointId: string; replica: number; tenantId: string; teamId: string },
    allocs: NewAllocation[],
    guard?: QuotaGuard,
  ): Promise<{ id: string } | null> {
    try {
      return await this.prisma.client.$transaction(async (tx) => {
        // (an endpoint never changes team: the owner read with the pending work holds)
        if (guard && !(await withinQuota(tx, { tenantId: work.tenantId, teamId: work.teamId }, allocs, guard))) return null;
        await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${work.endpointId} FOR UPDATE`;
        // (read after the lock, in one statement: the endpoint and how many replicas it has, serving or warm)
        const [ep] = await tx.$queryRaw<
          { id: string; tenantId: string; teamId: string; deleted: boolean; desiredReplicas: number; warmPool: number; active: number; serving: number }[]
        >`
          SELECT e.id, e."tenantId", e."teamId", e."deletedAt" IS NOT NULL AS deleted, e."desiredReplicas", e."warmPool",
            (SELECT count(*)::int FROM "EndpointReplica" r WHERE r."endpointId" = e.id AND r."endedAt" IS NULL) AS active,
            (SELECT count(*)::int FROM "EndpointReplica" r WHERE r."endpointId" = e.id AND r."endedAt" IS NULL AND r.serving) AS serving
          FROM "Endpoint" e WHERE e.id = ${work.endpointId}`;
        if (!ep || ep.deleted || ep.active >= ep.desiredReplicas + ep.warmPool) return null;
        const serving = ep.serving < ep.desiredReplicas;
        const [row] = await tx.$queryRaw<{ id: string }[]>`
          INSERT INTO "EndpointReplica" (id, "tenantId", "endpointId", replica, serving, "activeKey")
          VALUES (${newId()}, ${ep.tenantId}, ${ep.id}, ${work.replica}, ${serving}, ${`${ep.id}:${work.replica}`})
          RETURNING id`;
        await takeGpuSlots(
          tx,
          { tenantId: ep.tenantId, teamId: ep.teamId, endpointId: ep.id },
          allocs.map((a) => ({ ...a, replica: work.replica })),
        );
        return { id: row.id };
      });
    } catch (e) {
      if (e instanceof Abort || isUniqueViolation(e)) return null;
      throw e;
    }
  }

  /**
   * A replica still starting and what the driver's start request needs (its active allocations
   * with node name and GPU index), in one statement: it is on the path of every cold start.
   * Null when the replica is gone, ended, no longer starting or holds no allocation.
   */
  async startingReplica(id: string): Promise<StartingReplica | null> {
    const rows = await this.prisma.sql.query<{
      endpointId: string;
      replica: number;
      gpuId: string;
      migProfile: string | null;
      migStart: number | null;
      milli: number;
      nodeName: string;
      gpuIndex: number;
    }>(
      `SELECT r."endpointId", r."replica", a."gpuId", a."migProfile", a."migStart", a."milli", n."name" AS "nodeName", g."index" AS "gpuIndex"
       FROM "EndpointReplica" r
       JOIN "Allocation" a ON a."endpointId" = r."endpointId" AND a."replica" = r."replica" AND a."endedAt" IS NULL
       JOIN "Node" n ON n."id" = a."nodeId"
       JOIN "Gpu" g ON g."id" = a."gpuId"
       WHERE r."id" = $1 AND r."state" = 'starting' AND r."endedAt" IS NULL
       ORDER BY a."gpuId"`,
      [id],
    );
    const first = rows[0];
    if (!first) return null;
    return {
      id,
      endpointId: first.endpointId,
      replica: first.replica,
      allocations: rows.map((r) => ({
        gpuId: r.gpuId,
        migProfile: r.migProfile,
        migStart: r.migStart,
        milli: r.milli,
        nodeName: r.nodeName,
        gpuIndex: r.gpuIndex,
      })),
    };
  }

  /** starting -> ready. */
  async markReady(id: string, now: Date): Promise<boolean> {
    const r = await this.prisma.client.endpointReplica.updateMany({ where: { id, state: 'starting', endedAt: null }, data: { state: 'ready', readyAt: now } });
    return r.count === 1;
  }

  /** A warm-pool replica starts serving, or a serving one goes back to the warm pool. */
  async setServing(id: string, serving: boolean): Promise<boolean> {
    const r = await this.prisma.client.endpointReplica.updateMany({ where: { id, endedAt: null, serving: !serving }, data: { serving } });
    return r.count === 1;
  }

  /** Ends a replica and releases its GPU slots in one transaction. */
  stopReplica(id: string, now: Date): Promise<boolean> {
    return this.prisma.client.$transaction(async (tx) => {
      const rep = await tx.endpointReplica.findUnique({ where: { id } });
      if (!rep || rep.endedAt) return false;
      await tx.endpointReplica.update({ where: { id }, data: { state: 'stopped', endedAt: now, activeKey: null } });
      await tx.allocation.updateMany({ where: { endpointId: rep.endpointId, replica: rep.replica, endedAt: null }, data: { endedAt: now, activeSlot: null } });
      return true;
    });
  }

  /** The autoscaler's decision, guarded by the version it read (an activator or a manual scale meanwhile wins). */
  async setDesired(endpointId: string, desired: number, version: number): Promise<boolean> {
    const r = await this.prisma.client.endpoint.updateMany({
      where: { id: endpointId, version },
      data: { desiredReplicas: desired, version: { increment: 1 } },
    });
    return r.count === 1;
  }

  /** Clears a manual floor whose time is over. */
  async clearManual(endpointId: string): Promise<void> {
    await this.prisma.client.endpoint.update({ where: { id: endpointId }, data: { manualReplicas: null, manualUntil: null } });
  }
}
