import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ZLogin, ZLoginResult, type Login } from '@gantry/contracts';
import { Inject } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, Public } from './auth.decorators';
import { clientAddress } from './auth.guard';
import { CSRF_COOKIE, SESSION_COOKIE, setCookie } from './cookies';
import { RateLimiter } from './rate-limiter';
import { SessionsService } from './sessions.service';

const LOGIN_ATTEMPTS_PER_MINUTE = 10;

@ApiTags('auth')
@Controller('v1/auth')
export class AuthController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly limiter: RateLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('login')
  @Public()
  @HttpCode(200)
  @Route({ summary: 'Sign in with email and password: sets an httpOnly session cookie; answers the CSRF token for changes', body: ZLogin, ok: ZLoginResult, errors: [400, 401, 429], public: true })
  async login(@Body(new ZodPipe(ZLogin)) body: Login, @Req() req: Request & { principal?: Principal }, @Res({ passthrough: true }) res: Response) {
    const source = clientAddress(req);
    const rate = await this.limiter.hit(`login:${source ?? '?'}:${body.email}`, LOGIN_ATTEMPTS_PER_MINUTE);
    if (!rate.allowed) {
      res.setHeader('Retry-After', String(rate.resetSeconds));
      throw new DomainError('rate_limited', `too many sign-in attempts for ${body.email}; retry in ${rate.resetSeconds} s`);
    }
    const { token, result } = await this.sessions.login(body.email, body.password, source);
    const secure = this.config.auth.cookieSecure;
    const maxAge = this.sessions.sessionSeconds;
    res.setHeader('Set-Cookie', [
      setCookie(SESSION_COOKIE, token, { httpOnly: true, secure, sameSite: 'Lax', maxAgeSeconds: maxAge }),
      setCookie(CSRF_COOKIE, result.csrfToken, { httpOnly: false, secure, sameSite: 'Strict', maxAgeSeconds: maxAge }),
    ]);
    // For the audit log: the actor of a sign-in is the user who signed in.
    req.principal = { keyId: 'login', name: result.user.name, role: result.user.role, scopes: [], tenantId: result.user.tenantId, teamId: result.user.teamId, via: 'session', userId: result.user.id, email: result.user.email, source };
    return result;
  }

  @Post('logout')
  @HttpCode(204)
  @Route({ summary: 'End the console session (clears the cookies)', status: 204, errors: [401, 403] })
  async logout(@Caller() p: Principal, @Res({ passthrough: true }) res: Response): Promise<void> {
    if (p.via === 'session' && p.keyId.startsWith('session:')) await this.sessions.logout(p.keyId.slice('session:'.length));
    const secure = this.config.auth.cookieSecure;
    res.setHeader('Set-Cookie', [
      setCookie(SESSION_COOKIE, '', { httpOnly: true, secure, sameSite: 'Lax', maxAgeSeconds: 0 }),
      setCookie(CSRF_COOKIE, '', { httpOnly: false, secure, sameSite: 'Strict', maxAgeSeconds: 0 }),
    ]);
  }
}
