import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { page, ZAuditEntry, ZAuditQuery, ZPageQuery, type AuditEntry, type Page } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { toPage } from '../../common/pagination';
import { scopeOf, type Principal } from '../../common/principal';
import { requireRole } from '../../common/roles';
import { Caller } from '../../common/auth.decorators';
import { AuditRepository } from './audit.repository';

const ZAuditListQuery = ZPageQuery.extend(ZAuditQuery.shape);

@ApiTags('audit')
@Controller('v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditRepository) {}

  @Get()
  @Route({
    summary: "The audit log of the caller's tenant, newest first (tenant admin)",
    query: ZAuditListQuery,
    ok: page(ZAuditEntry),
    errors: [400, 401, 403],
  })
  async list(@Caller() p: Principal, @Query(new ZodPipe(ZAuditListQuery, 'query')) q: z.output<typeof ZAuditListQuery>): Promise<Page<AuditEntry>> {
    requireRole(p, 'tenant-admin');
    const rows = await this.audit.list(scopeOf(p), q, q);
    return toPage(rows, q, (r) => ({
      id: r.id,
      tenantId: r.tenantId,
      actor: r.actor,
      apiKeyId: r.apiKeyId,
      userId: r.userId,
      source: r.source,
      action: r.action,
      target: r.target,
      data: (r.data ?? {}) as Record<string, unknown>,
      createdAt: r.createdAt.toISOString(),
    }));
  }
}
