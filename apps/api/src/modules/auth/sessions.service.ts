import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { KeySessionResult, LoginResult } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import { safeEqual } from '../../common/safe-equal';
import type { Principal } from '../../common/principal';
import { presentUser } from '../users/users.presenter';
import { roleToApi } from '../../common/roles';
import { ROLE_SCOPES } from '../../common/role-scopes';
import { dummyHash, verifyPassword } from '../users/password';
import { SessionsRepository } from './sessions.repository';
import { AuthService } from './auth.service';
import { CredentialRevocations } from '../../common/credential-revocations.service';

const TOUCH_EVERY_MS = 60_000;
/** Accounts (in different tenants) one sign-in checks the password against, at most. */
export const MAX_ACCOUNTS_PER_EMAIL = 5;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A refused sign-in (401), carrying the tenants of the accounts tried (an e-mail is unique per
 * tenant: several tenants may have one), none when the address is unknown, for the audit log.
 */
export class SignInRefused extends DomainError {
  constructor(readonly tenantIds: (string | null)[]) {
    super('unauthenticated', 'invalid email or password');
  }
}

/** Console sessions: email + password (argon2id) -> an httpOnly cookie and a CSRF token. */
@Injectable()
export class SessionsService {
  private readonly logger = new Logger('sessions');

  constructor(
    private readonly repo: SessionsRepository,
    private readonly keys: AuthService,
    private readonly revocations: CredentialRevocations,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get sessionSeconds(): number {
    return this.config.auth.sessionHours * 3600;
  }

  /**
   * Checks the password; on success a new session (the token goes only in the cookie).
   *
   * An e-mail is unique per tenant, so several tenants may each have an account with it: the
   * password is checked against each (at most MAX_ACCOUNTS_PER_EMAIL, or the one of `tenant`,
   * a tenant slug) and the account it matches is signed in. When it matches accounts in more
   * than one tenant, 400 asks for `tenant`. Every candidate is checked (no early exit), and an
   * unknown e-mail or an account without a password costs a check against a dummy hash, so the
   * time taken does not tell whether, or which, account matched.
   */
  async login(
    email: string,
    password: string,
    source: string | null,
    opts: { tenant?: string } = {},
    now = new Date(),
  ): Promise<{ token: string; result: LoginResult }> {
    const candidates = await this.repo.findUsersByEmail(email, { tenantSlug: opts.tenant, take: MAX_ACCOUNTS_PER_EMAIL });
    const matches: typeof candidates = [];
    for (const u of candidates) {
      const ok = await verifyPassword(u.passwordHash ?? (await dummyHash()), password);
      if (ok && u.passwordHash) matches.push(u);
    }
    if (!candidates.length) await verifyPassword(await dummyHash(), password);
    if (!matches.length) throw new SignInRefused(candidates.map((u) => u.tenantId));
    if (matches.length > 1) {
      throw new DomainError(
        'validation_failed',
        "tenant: this email and password sign in to accounts in more than one tenant; send `tenant` (the tenant's slug) to choose one",
        [{ field: 'tenant', problem: 'required: the email and password match accounts in several tenants' }],
      );
    }
    const user = matches[0]!;
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    const expiresAt = new Date(now.getTime() + this.sessionSeconds * 1000);
    await this.repo.create({ userId: user.id, tokenHash: sha256(token), csrfToken, source, expiresAt });
    return { token, result: { user: presentUser(user), csrfToken, expiresAt: expiresAt.toISOString() } };
  }

  /**
   * Exchanges the API key the caller authenticated with (`keyHash`, sha256 of the key) for a
   * session, so that the console keeps an httpOnly cookie instead of the key. Every use of the
   * session re-checks the key: revoked or expired, the session ends with it.
   */
  async startFromKey(p: Principal, keyHash: string, source: string | null, now = new Date()): Promise<{ token: string; result: KeySessionResult }> {
    if (p.via !== 'api-key') {
      throw new DomainError('validation_failed', 'Authorization: send the API key to exchange as "Authorization: Bearer gk_..."', [
        { field: 'Authorization', problem: 'an API key is required (a session cannot be exchanged)' },
      ]);
    }
    const token = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(24).toString('base64url');
    const expiresAt = new Date(now.getTime() + this.sessionSeconds * 1000);
    await this.repo.create({ apiKeyHash: keyHash, tokenHash: sha256(token), csrfToken, source, expiresAt });
    return { token, result: { csrfToken, expiresAt: expiresAt.toISOString() } };
  }

  /**
   * Resolves a session cookie to a principal, or throws 401. Changes (anything but GET/HEAD/
   * OPTIONS) must carry the session's CSRF token in `X-CSRF-Token` (403 otherwise).
   */
  async authenticate(token: string, method: string, csrfHeader: string | undefined, now = new Date()): Promise<Principal & { sessionId: string }> {
    const s = await this.repo.findByTokenHash(sha256(token));
    if (!s || s.revokedAt) throw new DomainError('unauthenticated', 'this session has ended; sign in again');
    if (s.expiresAt <= now) throw new DomainError('unauthenticated', 'this session has expired; sign in again');
    if (!SAFE_METHODS.has(method.toUpperCase())) {
      if (!safeEqual(csrfHeader ?? '', s.csrfToken)) {
        throw new DomainError('forbidden', 'missing or wrong X-CSRF-Token: a change made with a session cookie must carry the CSRF token');
      }
    }
    if (now.getTime() - s.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
      this.repo.touch(s.id, now).catch((e: unknown) => this.logger.warn(`could not record session use: ${String(e)}`));
    }
    if (s.apiKeyHash) {
      const key = await this.keys.byHash(s.apiKeyHash, now);
      return { ...key, keyId: `session:${s.id}`, sessionId: s.id, via: 'session' };
    }
    if (!s.user) throw new DomainError('unauthenticated', 'this session has ended; sign in again');
    const role = roleToApi(s.user.role);
    return {
      keyId: `session:${s.id}`,
      sessionId: s.id,
      name: s.user.name,
      role,
      scopes: ROLE_SCOPES[role],
      tenantId: s.user.tenantId,
      teamId: s.user.teamId,
      via: 'session',
      userId: s.user.id,
      email: s.user.email,
      owner: `user:${s.user.id}`,
      apiKeyId: null,
    };
  }

  async logout(sessionId: string): Promise<void> {
    await this.repo.revoke(sessionId, new Date());
    await this.revocations.revoked({ sessionId });
  }
}
