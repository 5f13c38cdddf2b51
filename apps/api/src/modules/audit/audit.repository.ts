import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';
import { newId } from '../../common/ids';

export interface NewAuditEntry {
  tenantId: string | null;
  actor: string;
  apiKeyId: string | null;
  userId: string | null;
  source: string | null;
  action: string;
  target: string | null;
  data: Record<string, unknown>;
}

/** Entries written together at most, and how long an entry waits for others. */
const BATCH = 200;
const WAIT_MS = 50;

/**
 * The audit log: appended by the audit interceptor, read through the caller's tenant scope.
 * Appends are written in batches (one statement for up to BATCH entries, at most WAIT_MS after
 * the first), each entry with the time of its request; a read of this process flushes first, so
 * a caller always sees its own changes, and shutdown flushes what is left.
 */
@Injectable()
export class AuditRepository implements BeforeApplicationShutdown {
  private readonly logger = new Logger('audit');
  private buffer: { entry: NewAuditEntry; at: Date; done: () => void; failed: (e: unknown) => void }[] = [];
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly prisma: PrismaService) {}

  /** Queues one entry; resolves once it is written (rejects when its batch could not be). */
  append(entry: NewAuditEntry, at = new Date()): Promise<void> {
    return new Promise<void>((done, failed) => {
      this.buffer.push({ entry, at, done, failed });
      if (this.buffer.length >= BATCH) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), WAIT_MS);
    });
  }

  /** Writes every queued entry (batches in order); resolves when they are written. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    this.writing = this.writing.then(() => (batch.length ? this.write(batch) : undefined));
    await this.writing;
  }

  private async write(batch: typeof this.buffer): Promise<void> {
    const cols = (f: (e: NewAuditEntry) => unknown) => batch.map((b) => f(b.entry));
    try {
      await this.prisma.sql.query(
        `INSERT INTO "AuditLog" ("id", "tenantId", "actor", "apiKeyId", "userId", "source", "action", "target", "data", "createdAt")
         SELECT id, "tenantId", actor, "apiKeyId", "userId", source, action, target, data::jsonb, at::timestamp(3)
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
           AS t(id, "tenantId", actor, "apiKeyId", "userId", source, action, target, data, at)`,
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
        ],
      );
      for (const b of batch) b.done();
    } catch (e) {
      this.logger.error(`could not write ${batch.length} audit entries: ${String(e)}`);
      for (const b of batch) b.failed(e);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  async list(scope: TenantScope, q: PageQuery, filter: { action?: string; actor?: string; from?: string; to?: string }) {
    await this.flush();
    const a = pageArgs(q, 'desc');
    return this.prisma.client.auditLog.findMany({
      ...a,
      where: {
        AND: [
          a.where,
          scopeWhere(scope, 'tenant-rows'),
          filter.action ? { action: { contains: filter.action } } : {},
          filter.actor ? { actor: { contains: filter.actor, mode: 'insensitive' as const } } : {},
          filter.from ? { createdAt: { gte: new Date(filter.from) } } : {},
          filter.to ? { createdAt: { lt: new Date(filter.to) } } : {},
        ],
      },
    });
  }
}
