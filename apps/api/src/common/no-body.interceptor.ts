import { Injectable, UseInterceptors, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { z } from 'zod';
import { parseOr400 } from './zod.pipe';

/** What a route that takes no body accepts: none at all, or `{}`. */
export const ZNoBody = z.object({}).strict();

/** Refuses a body with fields on a route that takes none (400 naming them), instead of ignoring it. */
@Injectable()
export class NoBodyInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = ctx.switchToHttp().getRequest<Request>().body;
    if (body !== undefined) parseOr400(ZNoBody, body);
    return next.handle();
  }
}

/**
 * Marks an action route that takes no body (cancel, suspend, resume, uncordon, delete, logout):
 * like every body schema, it refuses fields it does not know (`{"force": true}` is a 400, not a
 * cancel that silently ignored `force`). Runs after the guard, so a caller without a key still gets 401.
 */
export const NoBody = () => UseInterceptors(NoBodyInterceptor);
