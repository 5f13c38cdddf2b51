import { Injectable } from '@nestjs/common';
import type { Prisma } from '@gantry/db';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { scopeWhere, type TenantScope } from '../../common/tenant-scope';

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

/** The audit log: appended by the audit interceptor, read through the caller's tenant scope. */
@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  async append(e: NewAuditEntry): Promise<void> {
    await this.prisma.client.auditLog.create({ data: { ...e, data: e.data as Prisma.InputJsonValue } });
  }

  list(scope: TenantScope, q: PageQuery, filter: { action?: string; actor?: string; from?: string; to?: string }) {
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
