import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Scope } from '@gantry/contracts';
import { DomainError } from '../../common/errors';
import { hasScope, type Principal } from '../../common/principal';
import { PUBLIC_ROUTE, REQUIRED_SCOPES } from './auth.decorators';
import { AuthService } from './auth.service';

/** Global guard: every route needs an API key unless marked @Public(); scopes are checked here. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const req = ctx.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; principal?: Principal }>();
    const principal = await this.auth.authenticate(req.headers['authorization']);
    req.principal = principal;
    const needed = this.reflector.getAllAndOverride<Scope[]>(REQUIRED_SCOPES, targets) ?? [];
    const missing = needed.filter((s) => !hasScope(principal, s));
    if (missing.length) throw new DomainError('forbidden', `this key lacks the scope ${missing.join(', ')}`);
    return true;
  }
}
