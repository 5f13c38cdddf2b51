import { applyDecorators, CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor, SetMetadata } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { Reflector } from '@nestjs/core';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { DomainError } from './errors';
import { ownerOf, type Principal } from './principal';
import { IdempotencyRepository, type IdempotencyRecordView } from './idempotency.repository';

const IDEMPOTENT_ROUTE = 'gantry:idempotent';
const TTL_SECONDS = 24 * 3600;
const KEY_SHAPE = /^[\x21-\x7e]{1,200}$/;

/**
 * A creating POST that honours `Idempotency-Key`: a retry with the same key (and the same
 * body) returns the first answer, never a second resource. (Jobs keep theirs in Postgres.)
 */
export const Idempotent = () =>
  applyDecorators(
    SetMetadata(IDEMPOTENT_ROUTE, true),
    ApiHeader({ name: 'Idempotency-Key', required: false, description: 'a retry with the same key returns the first answer' }),
  );

/**
 * How long a pending record may hold its key. A pending record older than this is taken
 * over by the next request with that key, as if the key were free.
 *
 * Why 2 minutes: a pending record is either a request still running or the leftover of a
 * process that died mid-request (crash, SIGKILL, deploy). Kept for its 24 hours, a leftover
 * would answer every retry with 409 for a day, and the client's only way out would be a new
 * key, i.e. exactly the duplicate risk the key exists to prevent. A creating request is a
 * handful of writes in short transactions (Prisma's interactive transactions time out after
 * 5 s), so one still running after 2 minutes is, for practical purposes, dead; 2 minutes is
 * still far longer than a client's first retry backoffs, so a live request is practically
 * never raced.
 * The residual risk is the process that died after its transaction committed but before it
 * recorded the answer: the retry after 2 minutes runs again (where the resource has a unique
 * slug, the rerun gets 409 instead of a duplicate). A request that outlives its claim anyway cannot
 * overwrite or free its successor's record: each claim has its own token (see the repository).
 */
export const STALE_PENDING_MS = 2 * 60_000;
/** Expired records deleted per claim (opportunistic purge, index on expiresAt). */
const PURGE_BATCH = 100;

/**
 * Remembers the answer of an idempotent route per caller and key for 24 hours in Postgres
 * (IdempotencyRecord), so that a Redis loss loses nothing. While the first request runs, a
 * concurrent retry gets 409; a key reused with another body gets 409; a failed first request
 * frees the key so that a retry can run.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('idempotency');

  constructor(
    private readonly reflector: Reflector,
    private readonly records: IdempotencyRepository,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<Request & { principal?: Principal }>();
    const header = req.headers['idempotency-key'];
    if (!this.reflector.get<boolean>(IDEMPOTENT_ROUTE, ctx.getHandler()) || header === undefined) return next.handle();
    const res = ctx.switchToHttp().getResponse<Response>();
    return from(this.run(String(header), req, res, next));
  }

  private async run(key: string, req: Request & { principal?: Principal }, res: Response, next: CallHandler): Promise<unknown> {
    if (!KEY_SHAPE.test(key)) {
      throw new DomainError('validation_failed', 'Idempotency-Key: must be 1-200 printable ASCII characters without spaces', [
        { field: 'Idempotency-Key', problem: 'must be 1-200 printable ASCII characters without spaces' },
      ]);
    }
    // The caller's own key space: its owner (a user, or a chain of keys), never the tenant's.
    const caller = req.principal ? ownerOf(req.principal) : 'anonymous';
    const scope = `${caller}:${req.method}:${req.path}`;
    const bodyHash = createHash('sha256')
      .update(JSON.stringify(req.body ?? null))
      .digest('hex');
    const now = new Date();
    const claim = await this.records.claim({
      scope,
      key,
      bodyHash,
      now,
      expiresAt: new Date(now.getTime() + TTL_SECONDS * 1000),
      staleBefore: new Date(now.getTime() - STALE_PENDING_MS),
    });
    if (!claim.claimed) return this.replay(claim.record, bodyHash, res);
    await this.records.purgeExpired(now, PURGE_BATCH).catch((e: unknown) => this.logger.warn(`purging expired records failed: ${String(e)}`));
    let body: unknown;
    try {
      body = await lastValueFrom(next.handle(), { defaultValue: undefined });
    } catch (e) {
      await this.records.release(claim.token).catch((err: unknown) => this.logger.warn(`releasing ${scope} ${key} failed: ${String(err)}`));
      throw e;
    }
    // The resource exists: whatever happens to the record, the caller gets its answer. A record
    // left pending (database error here) frees the key after STALE_PENDING_MS.
    const recorded = await this.records.complete(claim.token, res.statusCode, body).catch((err: unknown) => {
      this.logger.error(`recording the answer of ${scope} ${key} failed: ${String(err)}`);
      return true;
    });
    if (!recorded) this.logger.warn(`${scope} ${key}: the claim was taken over as stale before the answer was recorded`);
    return body;
  }

  private replay(stored: IdempotencyRecordView | undefined, bodyHash: string, res: Response): unknown {
    if (!stored) throw new DomainError('conflict', 'a request with this Idempotency-Key just ended; retry');
    if (stored.bodyHash !== bodyHash) {
      throw new DomainError('conflict', 'this Idempotency-Key was used with a different request body', [
        { field: 'Idempotency-Key', problem: 'already used for another request' },
      ]);
    }
    if (stored.state === 'pending') throw new DomainError('conflict', 'a request with this Idempotency-Key is still in progress; retry later');
    res.status(stored.status === 201 ? 200 : (stored.status ?? 200));
    res.setHeader('Idempotent-Replayed', 'true');
    return stored.body ?? undefined;
  }
}
