import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Scope } from '@gantry/contracts';
import { DomainError } from '../../common/errors';
import { hasScope, type Principal } from '../../common/principal';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from './auth.decorators';
import { AuthService } from './auth.service';
import { CSRF_HEADER, parseCookies, SESSION_COOKIE } from './cookies';
import { RateLimiter } from './rate-limiter';
import { SessionsService } from './sessions.service';

/** The caller's address as the audit log records it. */
export function clientAddress(req: Request): string | null {
  const fwd = req.headers['x-forwarded-for'];
  const first = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim();
  const ip = first || req.ip || req.socket?.remoteAddress || null;
  return ip?.startsWith('::ffff:') ? ip.slice(7) : ip; // IPv4-mapped IPv6 as plain IPv4
}

/**
 * Global guard: every route needs an API key (`Authorization: Bearer gk_...`) or a console
 * session cookie (changes then need `X-CSRF-Token`) unless marked @Public(); each caller is
 * rate limited (429 + Retry-After); scopes are checked here, roles in the services.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    private readonly sessions: SessionsService,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const req = ctx.switchToHttp().getRequest<Request & { principal?: Principal }>();
    const res = ctx.switchToHttp().getResponse<Response>();
    const header = req.headers['authorization'];
    const cookie = header ? undefined : parseCookies(req.headers['cookie'])[SESSION_COOKIE];
    const principal: Principal = cookie
      ? await this.sessions.authenticate(cookie, req.method, req.headers[CSRF_HEADER] as string | undefined)
      : await this.auth.authenticate(header);
    principal.source = clientAddress(req);
    req.principal = principal;
    const rate = await this.limiter.hit(principal.via === 'session' && principal.userId ? `user:${principal.userId}` : `key:${principal.keyId}`);
    res.setHeader('X-RateLimit-Limit', String(rate.limit));
    res.setHeader('X-RateLimit-Remaining', String(rate.remaining));
    if (!rate.allowed) {
      res.setHeader('Retry-After', String(rate.resetSeconds));
      throw new DomainError('rate_limited', `rate limit of ${rate.limit} requests per minute reached for this ${principal.via === 'session' ? 'session' : 'key'}; retry in ${rate.resetSeconds} s`);
    }
    const needed = this.reflector.getAllAndOverride<Scope[]>(REQUIRED_SCOPES, targets) ?? [];
    const missing = needed.filter((s) => !hasScope(principal, s));
    if (missing.length) throw new DomainError('forbidden', `this ${principal.via === 'session' ? 'session' : 'key'} lacks the scope ${missing.join(', ')}`);
    return true;
  }
}
