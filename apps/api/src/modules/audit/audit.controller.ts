import { Controller, Get, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiTags } from '@nestjs/swagger';
import { describeChange, page, ZAuditEntry, ZAuditQuery, ZPageQuery, type AuditEntry, type Page } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { toPage } from '../../common/pagination';
import { scopeOf, type Principal } from '../../common/principal';
import { requireRole } from '../../common/roles';
import { Caller } from '../../common/auth.decorators';
import { AuditRepository } from './audit.repository';
import { DomainError } from '../../common/errors';
import { toCsv, type CsvValue } from '../../common/csv';

/** Most entries one CSV export carries (newest first). */
export const AUDIT_EXPORT_MAX = 10_000;
const EXPORT_PAGE = 500;

const ZAuditListQuery = ZPageQuery.extend(ZAuditQuery.shape);

@ApiTags('audit')
@Controller('v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditRepository) {}

  @Get()
  @Route({
    summary:
      "The audit log, newest first: a tenant admin reads the tenant's, a team admin its team's; refused changes (403, 409) included (outcome=refused: only those); from/to bound the time; format=csv exports every match (at most 10,000)",
    query: ZAuditListQuery,
    ok: page(ZAuditEntry),
    errors: [400, 401, 403],
  })
  async list(
    @Caller() p: Principal,
    @Query(new ZodPipe(ZAuditListQuery, 'query')) q: z.output<typeof ZAuditListQuery>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Page<AuditEntry> | string> {
    requireRole(p, 'tenant-admin', 'team-admin');
    if (q.from && q.to && Date.parse(q.from) >= Date.parse(q.to)) {
      throw new DomainError('validation_failed', `from: must be before to (${q.to})`, [{ field: 'from', problem: 'must be before to' }]);
    }
    const scope = scopeOf(p);
    const named = async (rows: Awaited<ReturnType<AuditRepository['list']>>) => {
      const names = await this.audit.targetNames(
        scope,
        rows.flatMap((r) => (r.target ? [r.target] : [])),
      );
      return rows.map((r) => ({ ...r, targetName: r.target ? (names.get(r.target) ?? null) : null }));
    };
    if (q.format !== 'csv') return toPage(await named(await this.audit.list(scope, q, q)), q, present);
    const rows: CsvValue[][] = [
      ['created_at', 'actor', 'via', 'api_key_id', 'user_id', 'source', 'action', 'outcome', 'target', 'target_name', 'changes', 'data'],
    ];
    let cursor: string | undefined;
    while (rows.length - 1 < AUDIT_EXPORT_MAX) {
      const pageQuery = { limit: EXPORT_PAGE, cursor };
      const found = toPage(await named(await this.audit.list(scope, pageQuery, q)), pageQuery, present);
      for (const e of found.items) {
        if (rows.length - 1 >= AUDIT_EXPORT_MAX) break;
        const via = typeof e.data.via === 'string' ? e.data.via : e.apiKeyId ? 'api-key' : 'session';
        const changes = Object.entries(e.changes ?? {}).map(([field, c]) => describeChange(field, c));
        rows.push([
          e.createdAt,
          e.actor,
          via,
          e.apiKeyId,
          e.userId,
          e.source,
          e.action,
          e.outcome,
          e.target,
          e.targetName,
          changes.join('; '),
          JSON.stringify(e.data),
        ]);
      }
      if (!found.nextCursor) break;
      cursor = found.nextCursor;
    }
    res.setHeader('content-type', 'text/csv; charset=utf-8');
    res.setHeader('content-disposition', 'attachment; filename="gantry-audit.csv"');
    return toCsv(rows);
  }
}

function present(r: Awaited<ReturnType<AuditRepository['list']>>[number] & { targetName: string | null }): AuditEntry {
  const data = (r.data ?? {}) as Record<string, unknown>;
  return {
    id: r.id,
    tenantId: r.tenantId,
    teamId: r.teamId,
    actor: r.actor,
    apiKeyId: r.apiKeyId,
    userId: r.userId,
    source: r.source,
    action: r.action,
    target: r.target,
    targetName: r.targetName,
    outcome: data.outcome === 'refused' ? 'refused' : 'done',
    data,
    changes: (r.changes ?? null) as AuditEntry['changes'],
    createdAt: r.createdAt.toISOString(),
  };
}
