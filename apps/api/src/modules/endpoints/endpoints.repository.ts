import { Injectable } from '@nestjs/common';
import type { Prisma } from '@gantry/db';
import type { EndpointCreateParsed, EndpointUpdate, PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assertCovers, scopeValues, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { newId } from '../../common/ids';

export const endpointWithReplicas = {
  replicas: { where: { endedAt: null }, orderBy: { replica: 'asc' } },
  allocations: {
    where: { endedAt: null },
    orderBy: [{ replica: 'asc' }, { gpuId: 'asc' }],
    include: { node: { select: { name: true } }, gpu: { select: { index: true } } },
  },
} satisfies Prisma.EndpointInclude;

export type EndpointRow = Prisma.EndpointGetPayload<{ include: typeof endpointWithReplicas }>;

/** Endpoints, always read and changed through the caller's tenant scope. */
@Injectable()
export class EndpointsRepository {
  constructor(private readonly prisma: PrismaService) {}

  private where(scope: TenantScope, id: string): Prisma.EndpointWhereInput {
    return { AND: [{ id }, scopeWhere(scope, 'team-rows'), { deletedAt: null }] };
  }

  async create(scope: TenantScope & { kind: 'tenant' }, body: EndpointCreateParsed) {
    assertCovers(scope, { tenantId: scope.tenantId, teamId: body.teamId }, `team ${body.teamId}`);
    return this.prisma.client.endpoint.create({
      data: {
        tenantId: scope.tenantId,
        teamId: body.teamId,
        name: body.name,
        model: body.model,
        resources: body.resources as Prisma.InputJsonValue,
        minReplicas: body.minReplicas,
        maxReplicas: body.maxReplicas,
        targetConcurrency: body.targetConcurrency,
        scaleToZeroAfterSeconds: body.scaleToZeroAfterSeconds,
        warmPool: body.warmPool,
        desiredReplicas: body.minReplicas,
      },
      include: endpointWithReplicas,
    });
  }

  list(scope: TenantScope, q: PageQuery, filter: { teamId?: string }) {
    const a = pageArgs(q, 'desc');
    return this.prisma.client.endpoint.findMany({
      ...a,
      where: { AND: [a.where, scopeWhere(scope, 'team-rows'), { deletedAt: null }, filter.teamId ? { teamId: filter.teamId } : {}] },
      include: endpointWithReplicas,
    });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.client.endpoint.findFirst({ where: this.where(scope, id), include: endpointWithReplicas });
  }

  /** What the activator needs of an endpoint (no replicas or allocations: one query on the request's path). */
  findForInvoke(scope: TenantScope, id: string) {
    return this.prisma.client.endpoint.findFirst({ where: this.where(scope, id), select: { id: true, name: true, model: true } });
  }

  /** Settings change; `desiredReplicas` follows the new bounds. False when gone. */
  async update(scope: TenantScope, id: string, patch: EndpointUpdate & { desiredReplicas?: number }): Promise<boolean> {
    const r = await this.prisma.client.endpoint.updateMany({ where: this.where(scope, id), data: { ...patch, version: { increment: 1 } } });
    return r.count === 1;
  }

  /** Manual scale: the count now, held as a floor until `until`. */
  async scale(scope: TenantScope, id: string, replicas: number, until: Date): Promise<boolean> {
    const r = await this.prisma.client.endpoint.updateMany({
      where: this.where(scope, id),
      data: { desiredReplicas: replicas, manualReplicas: replicas, manualUntil: until, version: { increment: 1 } },
    });
    return r.count === 1;
  }

  /** Soft delete: the worker stops the replicas; allocations keep their history. */
  async softDelete(scope: TenantScope, id: string, now: Date): Promise<boolean> {
    const r = await this.prisma.client.endpoint.updateMany({
      where: this.where(scope, id),
      data: { deletedAt: now, desiredReplicas: 0, warmPool: 0, name: `deleted-${now.getTime()}-${id}`, version: { increment: 1 } },
    });
    return r.count === 1;
  }

  /** A request arrived: the idle clock restarts. */
  async touch(scope: TenantScope, id: string, now: Date): Promise<void> {
    await this.prisma.client.endpoint.updateMany({ where: this.where(scope, id), data: { lastRequestAt: now } });
  }

  /**
   * The activator at zero: asks for one serving replica (a version bump, so that a concurrent
   * autoscaler decision made without this request loses) and promotes a ready warm-pool
   * replica when there is one. Returns true when a warm replica now serves.
   */
  async activate(scope: TenantScope, id: string, now: Date): Promise<boolean> {
    // One statement on every cold start's path: the wanted replica written and a ready warm one
    // promoted together (a data-modifying CTE runs whether or not it is read; the promotion re-checks
    // `serving` under the row lock: two activators promote a warm replica once).
    const within = scopeValues(scope);
    const [r] = await this.prisma.sql.query<{ promoted: number }>(
      `WITH ep AS (
         SELECT id FROM "Endpoint"
          WHERE id = $1 AND "deletedAt" IS NULL AND ($2::text IS NULL OR "tenantId" = $2) AND ($3::text IS NULL OR "teamId" = $3)),
       wanted AS (
         UPDATE "Endpoint" e SET "desiredReplicas" = 1, "lastRequestAt" = $4::timestamp(3), version = e.version + 1
           FROM ep WHERE e.id = ep.id AND e."desiredReplicas" = 0),
       warm AS (
         UPDATE "EndpointReplica" r SET serving = true
          WHERE r.id = (SELECT w.id FROM "EndpointReplica" w JOIN ep ON w."endpointId" = ep.id
                         WHERE w."endedAt" IS NULL AND NOT w.serving AND w.state = 'ready' ORDER BY w.replica LIMIT 1)
            AND NOT r.serving AND r."endedAt" IS NULL
          RETURNING r.id)
       SELECT (SELECT count(*) FROM warm)::int AS promoted`,
      [id, within.tenantId, within.teamId, now.toISOString()],
    );
    return (r?.promoted ?? 0) === 1;
  }

  /** A serving replica that answers now (lowest index first), or null. */
  servingReplica(scope: TenantScope, id: string) {
    return this.prisma.client.endpointReplica.findFirst({
      where: { AND: [{ endpointId: id, endedAt: null, serving: true, state: 'ready' }, { endpoint: scopeWhere(scope, 'team-rows') }] },
      orderBy: { replica: 'asc' },
      select: { replica: true },
    });
  }

  /** Records a cold start of an endpoint in the scope; false (nothing written) when the endpoint is outside it. */
  async recordColdStart(scope: TenantScope & { kind: 'tenant' }, id: string, c: { startedAt: Date; readyAt: Date; warm: boolean }): Promise<boolean> {
    // One statement (it is on the answer's path of every cold start): the row is written only
    // when the endpoint is in the caller's tenant (and team, for a team-bound key).
    const within = scopeValues(scope);
    const rows = await this.prisma.sql.query<{ id: string }>(
      `INSERT INTO "ColdStart" (id, "tenantId", "endpointId", "startedAt", "readyAt", "durationMs", warm)
       SELECT $1, e."tenantId", e.id, $4::timestamp(3), $5::timestamp(3), $6, $7
       FROM "Endpoint" e WHERE e.id = $2 AND ($3::text IS NULL OR e."tenantId" = $3) AND ($8::text IS NULL OR e."teamId" = $8)
       RETURNING id`,
      [newId(), id, within.tenantId, c.startedAt.toISOString(), c.readyAt.toISOString(), c.readyAt.getTime() - c.startedAt.getTime(), c.warm, within.teamId],
    );
    return rows.length === 1;
  }

  /** Cold-start durations (ms) of these endpoints, the most recent 500 each at most. */
  async coldStartDurations(scope: TenantScope, endpointIds: string[]): Promise<Map<string, { durationMs: number; startedAt: Date; warm: boolean }[]>> {
    const rows = await this.prisma.client.coldStart.findMany({
      where: { AND: [{ endpointId: { in: endpointIds } }, { endpoint: scopeWhere(scope, 'team-rows') }] },
      orderBy: { startedAt: 'desc' },
      select: { endpointId: true, durationMs: true, startedAt: true, warm: true },
      take: 500 * Math.max(1, endpointIds.length),
    });
    const out = new Map<string, { durationMs: number; startedAt: Date; warm: boolean }[]>();
    for (const r of rows) {
      const list = out.get(r.endpointId) ?? [];
      if (list.length < 500) list.push(r);
      out.set(r.endpointId, list);
    }
    return out;
  }
}
