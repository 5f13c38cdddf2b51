import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { newId } from '../../common/ids';
import { MicroBatch } from '../../common/micro-batch';

export interface NewAuditEntry {
  tenantId: string | null;
  /** The team the action was about (its target's, or the actor's); null for tenant- or cluster-wide actions. */
  teamId?: string | null;
  actor: string;
  apiKeyId: string | null;
  userId: string | null;
  source: string | null;
  action: string;
  target: string | null;
  /** What an update moved: `{ field: { from, to } }` (secrets never); null or absent when nothing. */
  changes?: Record<string, unknown> | null;
  data: Record<string, unknown>;
}

/** Entries written together at most, and how long an entry waits for others. */
const BATCH = 200;
const WAIT_MS = 50;

type Pending = { entry: NewAuditEntry; at: Date; done: () => void; failed: (e: unknown) => void };

/**
 * The audit log: appended by the audit interceptor, read through the caller's tenant scope.
 * Appends are written in batches (one statement for up to BATCH entries, at most WAIT_MS after
 * the first), each entry with the time of its request; a read of this process flushes first, so
 * a caller always sees its own changes, and shutdown flushes what is left.
 */
@Injectable()
export class AuditRepository implements BeforeApplicationShutdown {
  private readonly logger = new Logger('audit');
  private readonly batch = new MicroBatch<Pending>((batch) => this.write(batch), WAIT_MS, BATCH);

  constructor(private readonly prisma: PrismaService) {}

  /** Queues one entry; resolves once it is written (rejects when its batch could not be). */
  append(entry: NewAuditEntry, at = new Date()): Promise<void> {
    return new Promise<void>((done, failed) => this.batch.add({ entry, at, done, failed }));
  }

  /** Writes every queued entry (batches in order); resolves when they are written. */
  flush(): Promise<void> {
    return this.batch.drain();
  }

  private async write(batch: Pending[]): Promise<void> {
    const cols = (f: (e: NewAuditEntry) => unknown) => batch.map((b) => f(b.entry));
    try {
      await this.prisma.sql.query(
        `INSERT INTO "AuditLog" ("id", "tenantId", "teamId", "actor", "apiKeyId", "userId", "source", "action", "target", "data", "changes", "createdAt")
         SELECT id, "tenantId", "teamId", actor, "apiKeyId", "userId", source, action, target, data::jsonb, changes::jsonb, at::timestamp(3)
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
           AS t(id, "tenantId", actor, "apiKeyId", "userId", source, action, target, data, at, "teamId", changes)`,
        [
          batch.map((b) => newId(b.at.getTime())),
          cols((e) => e.tenantId),
          cols((e) => e.actor),
          cols((e) => e.apiKeyId),
          cols((e) => e.userId),
          cols((e) => e.source),
          cols((e) => e.action),
          cols((e) => e.target),
          cols((e) => JSON.stringify(e.data)),
          batch.map((b) => b.at.toISOString()),
          cols((e) => e.teamId ?? null),
          cols((e) => (e.changes ? JSON.stringify(e.changes) : null)),
        ],
      );
      for (const b of batch) b.done();
    } catch (e) {
      this.logger.error(`could not write ${batch.length} audit entries: ${String(e)}`);
      for (const b of batch) b.failed(e);
    }
  }

  /**
   * Names of audit targets (jobs, endpoints, teams, keys, users, nodes, tenants) the scope may see,
   * by id: the log shows what was changed, not a raw id.
   */
  async targetNames(scope: TenantScope, ids: string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const unique = [...new Set(ids)].filter((id) => id.length <= 64);
    if (unique.length === 0) return names;
    const inIds = { id: { in: unique } };
    const teamRows = scopeWhere(scope, 'team-rows');
    const [jobs, endpoints, teams, keys, users, nodes, tenants] = await Promise.all([
      this.prisma.client.job.findMany({ where: { AND: [inIds, teamRows] }, select: { id: true, name: true } }),
      this.prisma.client.endpoint.findMany({ where: { AND: [inIds, teamRows] }, select: { id: true, name: true } }),
      this.prisma.client.team.findMany({ where: { AND: [inIds, scopeWhere(scope, 'team')] }, select: { id: true, name: true } }),
      this.prisma.client.apiKey.findMany({ where: { AND: [inIds, scopeWhere(scope, 'tenant-rows')] }, select: { id: true, name: true } }),
      this.prisma.client.user.findMany({ where: { AND: [inIds, scopeWhere(scope, 'tenant-rows')] }, select: { id: true, name: true, email: true } }),
      this.prisma.client.node.findMany({ where: inIds, select: { id: true, name: true } }),
      this.prisma.client.tenant.findMany({ where: { AND: [inIds, scopeWhere(scope, 'tenant')] }, select: { id: true, name: true } }),
    ]);
    for (const r of jobs) names.set(r.id, `job ${r.name}`);
    for (const r of endpoints) names.set(r.id, `endpoint ${r.name}`);
    for (const r of teams) names.set(r.id, `team ${r.name}`);
    for (const r of keys) names.set(r.id, `API key ${r.name}`);
    for (const r of users) names.set(r.id, `user ${r.name} <${r.email}>`);
    for (const r of nodes) names.set(r.id, `node ${r.name}`);
    for (const r of tenants) names.set(r.id, `tenant ${r.name}`);
    return names;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  async list(scope: TenantScope, q: PageQuery, filter: { action?: string; actor?: string; from?: string; to?: string; outcome?: 'refused' }) {
    await this.flush();
    const a = pageArgs(q, 'desc');
    return this.prisma.client.auditLog.findMany({
      ...a,
      where: {
        AND: [
          a.where,
          // the tenant's entries; a team-bound reader (a team admin) its own team's only
          scopeWhere(scope, 'team-rows'),
          filter.outcome === 'refused' ? { data: { path: ['outcome'], equals: 'refused' } } : {},
          filter.action ? { action: { contains: filter.action } } : {},
          filter.actor ? { actor: { contains: filter.actor, mode: 'insensitive' as const } } : {},
          filter.from ? { createdAt: { gte: new Date(filter.from) } } : {},
          filter.to ? { createdAt: { lt: new Date(filter.to) } } : {},
        ],
      },
    });
  }
}
