import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Scope } from '@gantry/contracts';
import type { Principal } from './principal';

export const PUBLIC_ROUTE = 'gantry:public';
export const REQUIRED_SCOPES = 'gantry:scopes';

/** A route anyone may call (health, docs). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** The scopes a caller's key must carry for this route. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** The authenticated caller. */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  return ctx.switchToHttp().getRequest<{ principal: Principal }>().principal;
});
