import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Scope } from '@gantry/contracts';
import { DomainError } from '../../common/errors';
import { hasScope, ownerOf, type Principal } from '../../common/principal';
import { clientAddressFrom } from '../../config/client-address';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from '../../common/auth.decorators';
import { AuthService } from './auth.service';
import { CSRF_HEADER, parseCookies, SESSION_COOKIE } from './cookies';
import { RateLimiter } from './rate-limiter.service';
import { SessionsService } from './sessions.service';

/**
 * The caller's address, as rate limits and the audit log use it: the TCP peer, or what a
 * trusted proxy (GANTRY_TRUSTED_PROXIES) says in X-Forwarded-For; never the header of anyone else.
 */
export function clientAddress(req: Request, trustedProxies: readonly string[]): string | null {
  return clientAddressFrom(req.socket?.remoteAddress, req.headers['x-forwarded-for'], trustedProxies);
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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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
    principal.source = clientAddress(req, this.config.auth.trustedProxies);
    req.principal = principal;
    // One budget per owner (a user, or a chain of keys): more keys or sessions buy no more requests.
    const rate = await this.limiter.hit(`owner:${ownerOf(principal)}`);
    res.setHeader('X-RateLimit-Limit', String(rate.limit));
    res.setHeader('X-RateLimit-Remaining', String(rate.remaining));
    if (!rate.allowed) {
      res.setHeader('Retry-After', String(rate.resetSeconds));
      throw new DomainError(
        'rate_limited',
        `rate limit of ${rate.limit} requests per minute reached for ${principal.userId ? 'this user' : 'this key and the keys it made'}; retry in ${rate.resetSeconds} s`,
      );
    }
    const needed = this.reflector.getAllAndOverride<Scope[]>(REQUIRED_SCOPES, targets) ?? [];
    const missing = needed.filter((s) => !hasScope(principal, s));
    if (missing.length) throw new DomainError('forbidden', `this ${principal.via === 'session' ? 'session' : 'key'} lacks the scope ${missing.join(', ')}`);
    return true;
  }
}
