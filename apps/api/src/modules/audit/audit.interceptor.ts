import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { from, mergeMap, Observable, tap } from 'rxjs';
import { HttpException } from '@nestjs/common';
import { DomainError, HTTP_STATUS } from '../../common/errors';
import type { Principal } from '../../common/principal';
import { toStorableString } from '../../common/json-shape';
import { redact } from './redact';
import { AuditRepository } from './audit.repository';
import { AuditSubjectsRepository, subjectOfRoute, type Snapshot } from './audit-subjects.repository';
import { changesBetween } from './audit-changes';

export { redact };

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const storable = toStorableString;

/** Refusals of a change that are audited (a caller trying what its role or the state does not allow). */
const REFUSED_STATUSES = new Set([403, 409]);

function statusOf(err: unknown): number | undefined {
  if (err instanceof DomainError) return HTTP_STATUS[err.code];
  if (err instanceof HttpException) return err.getStatus();
  return undefined;
}

/** The team an action was about: the team it created or changed, the team route's own id, or the caller's team. */
export function teamOfAction(route: string, params: Record<string, string>, body: unknown, result: unknown, p: Principal): string | null {
  const fromResult = result && typeof result === 'object' && 'teamId' in result ? (result as { teamId: unknown }).teamId : undefined;
  if (typeof fromResult === 'string') return fromResult;
  if (route.startsWith('/v1/teams/:id') && params.id) return params.id;
  const fromBody = body && typeof body === 'object' && 'teamId' in body ? (body as { teamId: unknown }).teamId : undefined;
  if (typeof fromBody === 'string' && fromBody.length <= 64) return fromBody;
  return p.teamId ?? null;
}

/**
 * Every change through the API (POST, PUT, PATCH, DELETE) is audited: the actor, the key or
 * session, the source address, the route, its target, its team and the redacted request; a
 * change refused with 403 or 409 is audited too, as `outcome: refused` with the reason.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  private readonly logger = new Logger('audit');

  constructor(
    private readonly audit: AuditRepository,
    private readonly subjects: AuditSubjectsRepository,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<Request & { principal?: Principal }>();
    if (!CHANGES.has(req.method)) return next.handle();
    const route = (req.route as { path?: string } | undefined)?.path ?? req.path;
    const params = (req.params ?? {}) as Record<string, string>;
    // An update's subject is read before and after the handler: the entry records what moved.
    const subject = req.principal && params.id ? subjectOfRoute(route) : undefined;
    const read = async (): Promise<Snapshot | null> => {
      if (!subject) return null;
      try {
        return await this.subjects.snapshot(subject, params.id!);
      } catch (e) {
        this.logger.warn(`could not read ${subject} ${params.id} for the audit log: ${String(e)}`);
        return null;
      }
    };
    let before: Snapshot | null = null;
    const write = (result: unknown, status: number, refusal?: { code: string; message: string }, changes: ReturnType<typeof changesBetween> = null) => {
      const p = req.principal;
      if (!p) return;
      const created = result && typeof result === 'object' && 'id' in result ? String((result as { id: unknown }).id) : undefined;
      const target = params.id ?? params.tenantId ?? created ?? null;
      const tenantId =
        p.tenantId ?? (result && typeof result === 'object' && 'tenantId' in result ? ((result as { tenantId: string | null }).tenantId ?? null) : null);
      this.audit
        .append({
          tenantId,
          teamId: teamOfAction(route, params, req.body, result, p),
          actor: p.email ? `${p.name} <${p.email}>` : p.name,
          // The key behind the change: the caller's key, or the key a console session was made from.
          apiKeyId: p.keyId === 'login' ? null : (p.apiKeyId ?? (p.via === 'session' ? null : p.keyId)),
          userId: p.userId ?? null,
          source: p.source ?? null,
          action: `${req.method} ${route}`,
          target,
          changes,
          data: {
            via: p.via ?? 'api-key',
            ...(p.via === 'session' && p.keyId.startsWith('session:') ? { sessionId: p.keyId.slice(8) } : {}),
            role: p.role,
            status,
            ...(refusal ? { outcome: 'refused', error: refusal } : {}),
            ...(Object.keys(params).length ? { params } : {}),
            ...(req.body && typeof req.body === 'object' && Object.keys(req.body).length ? { request: redact(req.body) } : {}),
          },
        })
        .catch((e: unknown) => this.logger.error(`could not write the audit log: ${String(e)}`));
    };
    return from(read()).pipe(
      tap((snapshot) => (before = snapshot)),
      mergeMap(() => next.handle()),
      // the entry is queued before the response goes out: a read of the log right after sees it
      mergeMap(async (result: unknown) => {
        const changes = subject ? changesBetween(before, await read()) : null;
        write(result, ctx.switchToHttp().getResponse<Response>().statusCode, undefined, changes);
        return result;
      }),
      tap({
        error: (err: unknown) => {
          const status = statusOf(err);
          if (status === undefined || !REFUSED_STATUSES.has(status)) return;
          const code = err instanceof DomainError ? err.code : status === 403 ? 'forbidden' : 'conflict';
          write(undefined, status, { code, message: storable(err instanceof Error ? err.message : String(err)).slice(0, 500) });
        },
      }),
    );
  }
}
