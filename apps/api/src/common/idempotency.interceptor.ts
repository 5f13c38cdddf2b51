import { applyDecorators, CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { Reflector } from '@nestjs/core';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DomainError } from './errors';
import type { Principal } from './principal';
import { RedisService } from './redis.service';

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

interface Stored {
  state: 'pending' | 'done';
  bodyHash: string;
  status?: number;
  body?: unknown;
}

/**
 * Remembers the answer of an idempotent route per caller and key for 24 hours in Redis.
 * While the first request runs, a concurrent retry gets 409; a key reused with another body
 * gets 409; a failed first request frees the key so that a retry can run.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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
    const caller = req.principal?.keyId ?? 'anonymous';
    const slot = `${this.config.queuePrefix}:idem:${caller}:${req.method}:${req.path}:${key}`;
    const bodyHash = createHash('sha256').update(JSON.stringify(req.body ?? null)).digest('hex');
    const claimed = await this.redis.client.set(slot, JSON.stringify({ state: 'pending', bodyHash } satisfies Stored), 'EX', TTL_SECONDS, 'NX');
    if (claimed !== 'OK') return this.replay(slot, bodyHash, res);
    try {
      const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
      await this.redis.client.set(slot, JSON.stringify({ state: 'done', bodyHash, status: res.statusCode, body } satisfies Stored), 'EX', TTL_SECONDS);
      return body;
    } catch (e) {
      await this.redis.client.del(slot);
      throw e;
    }
  }

  private async replay(slot: string, bodyHash: string, res: Response): Promise<unknown> {
    const raw = await this.redis.client.get(slot);
    const stored = raw ? (JSON.parse(raw) as Stored) : undefined;
    if (!stored) throw new DomainError('conflict', 'a request with this Idempotency-Key just ended; retry');
    if (stored.bodyHash !== bodyHash) {
      throw new DomainError('conflict', 'this Idempotency-Key was used with a different request body', [
        { field: 'Idempotency-Key', problem: 'already used for another request' },
      ]);
    }
    if (stored.state === 'pending') throw new DomainError('conflict', 'a request with this Idempotency-Key is still in progress; retry later');
    res.status(stored.status === 201 ? 200 : (stored.status ?? 200));
    res.setHeader('Idempotent-Replayed', 'true');
    return stored.body;
  }
}
