import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { ZKeySessionResult, ZLogin, ZLoginResult, type KeySessionResult, type Login } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { AuditRepository } from '../audit/audit.repository';
import { Caller, Public } from '../../common/auth.decorators';
import { clientAddress } from './auth.guard';
import { CSRF_COOKIE, SESSION_COOKIE, setCookie } from './cookies';
import { RateLimiter } from './rate-limiter.service';
import { SessionsService, SignInRefused } from './sessions.service';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

@ApiTags('auth')
@Controller('v1/auth')
export class AuthController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly limiter: RateLimiter,
    private readonly audit: AuditRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Two limits, both per minute: attempts per client address (a guesser spraying accounts),
   * and failed attempts per account (a guesser on one account from many addresses: while it is
   * reached, even the right password waits). Each refused sign-in is audited.
   */
  @Post('login')
  @Public()
  @HttpCode(200)
  @Route({
    summary:
      'Sign in with email and password (and `tenant`, a slug, when the address has accounts in several tenants): sets an httpOnly session cookie; answers the CSRF token for changes',
    body: ZLogin,
    ok: ZLoginResult,
    errors: [400, 401, 429],
    public: true,
  })
  async login(@Body(new ZodPipe(ZLogin)) body: Login, @Req() req: Request & { principal?: Principal }, @Res({ passthrough: true }) res: Response) {
    const source = clientAddress(req, this.config.auth.trustedProxies);
    const account = body.email.trim().toLowerCase();
    const limit = this.config.auth.loginAttemptsPerMinute;
    const [byAddress, failures] = await Promise.all([
      this.limiter.hit(`login:addr:${source ?? '?'}`, this.config.auth.loginAddressAttemptsPerMinute),
      this.limiter.peek(`login:account-failures:${account}`, limit),
    ]);
    const blocked = !byAddress.allowed ? byAddress : !failures.allowed ? failures : null;
    if (blocked) {
      res.setHeader('Retry-After', String(blocked.resetSeconds));
      await this.auditSignIn(null, body.email, source, 'rate_limited');
      throw new DomainError(
        'rate_limited',
        `too many sign-in attempts${blocked === failures ? ` for ${body.email}` : ' from this address'}; retry in ${blocked.resetSeconds} s`,
      );
    }
    let session: Awaited<ReturnType<SessionsService['login']>>;
    try {
      session = await this.sessions.login(body.email, body.password, source, { tenant: body.tenant });
    } catch (e) {
      if (e instanceof SignInRefused) {
        await this.limiter.hit(`login:account-failures:${account}`, limit);
        // In the log of each tenant with an account at this address (the platform's when none).
        for (const tenantId of e.tenantIds.length ? e.tenantIds : [null]) await this.auditSignIn(tenantId, body.email, source, 'wrong_email_or_password');
      }
      throw e;
    }
    const { token, result } = session;
    this.setSessionCookies(res, token, result.csrfToken);
    // For the audit log: the actor of a sign-in is the user who signed in.
    req.principal = {
      keyId: 'login',
      name: result.user.name,
      role: result.user.role,
      scopes: [],
      tenantId: result.user.tenantId,
      teamId: result.user.teamId,
      via: 'session',
      userId: result.user.id,
      email: result.user.email,
      source,
    };
    return result;
  }

  /**
   * The console's sign-in with an API key: the key (sent once, as the bearer) is exchanged for
   * the same httpOnly session cookie a password sign-in gets, so the browser never stores it.
   */
  @Post('key-session')
  @NoBody()
  @HttpCode(200)
  @Route({
    summary: 'Exchange the API key of this request for a console session (httpOnly cookie); answers the CSRF token for changes',
    ok: ZKeySessionResult,
    errors: [400, 401, 429],
  })
  async keySession(@Caller() p: Principal, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<KeySessionResult> {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers['authorization'] ?? '')?.[1];
    if (!bearer) {
      throw new DomainError('validation_failed', 'Authorization: send the API key to exchange as "Authorization: Bearer gk_..."', [
        { field: 'Authorization', problem: 'an API key is required (a session cannot be exchanged)' },
      ]);
    }
    const { token, result } = await this.sessions.startFromKey(p, sha256(bearer), p.source ?? null);
    this.setSessionCookies(res, token, result.csrfToken);
    return result;
  }

  @Post('logout')
  @NoBody()
  @HttpCode(204)
  @Route({ summary: 'End the console session (clears the cookies)', status: 204, errors: [400, 401, 403] })
  async logout(@Caller() p: Principal, @Res({ passthrough: true }) res: Response): Promise<void> {
    if (p.via === 'session' && p.keyId.startsWith('session:')) await this.sessions.logout(p.keyId.slice('session:'.length));
    const secure = this.config.auth.cookieSecure;
    res.setHeader('Set-Cookie', [
      setCookie(SESSION_COOKIE, '', { httpOnly: true, secure, sameSite: 'Lax', maxAgeSeconds: 0 }),
      setCookie(CSRF_COOKIE, '', { httpOnly: false, secure, sameSite: 'Strict', maxAgeSeconds: 0 }),
    ]);
  }

  private setSessionCookies(res: Response, token: string, csrfToken: string): void {
    const secure = this.config.auth.cookieSecure;
    const maxAge = this.sessions.sessionSeconds;
    res.setHeader('Set-Cookie', [
      setCookie(SESSION_COOKIE, token, { httpOnly: true, secure, sameSite: 'Lax', maxAgeSeconds: maxAge }),
      setCookie(CSRF_COOKIE, csrfToken, { httpOnly: false, secure, sameSite: 'Strict', maxAgeSeconds: maxAge }),
    ]);
  }

  /** A refused sign-in in the audit log: of the account's tenant when the account exists, else the platform's. */
  private async auditSignIn(tenantId: string | null, email: string, source: string | null, outcome: 'wrong_email_or_password' | 'rate_limited'): Promise<void> {
    await this.audit
      .append({
        tenantId,
        actor: email.slice(0, 320),
        apiKeyId: null,
        userId: null,
        source,
        action: 'POST /v1/auth/login',
        target: null,
        data: { via: 'session', outcome, status: outcome === 'rate_limited' ? 429 : 401 },
      })
      .catch(() => undefined);
  }
}
