import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { ApiKeysRepository } from '../api-keys/api-keys.repository';
import { keyProblem } from './auth.service';
import { SessionsRepository } from './sessions.repository';

/**
 * Re-checks, while a long request runs (a live event stream), that the credential it was
 * opened with is still valid: the session not ended or expired, the key not revoked or expired.
 */
@Injectable()
export class CredentialCheck {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly sessions: SessionsRepository,
  ) {}

  /** Why the caller's credential is no longer valid, or null while it is. */
  async problem(p: Principal, now = new Date()): Promise<string | null> {
    if (p.via === 'session' && p.keyId.startsWith('session:')) {
      const s = await this.sessions.validity(p.keyId.slice('session:'.length));
      if (!s || s.revokedAt) return 'this session has ended';
      if (s.expiresAt <= now) return 'this session has expired';
    }
    if (p.apiKeyId && p.apiKeyId !== 'bootstrap') {
      const k = await this.keys.validity(p.apiKeyId);
      return k ? keyProblem(k, now) : 'this API key no longer exists';
    }
    return null;
  }

  /** True when a revocation names the caller's credential (its key, or its session). */
  static names(p: Principal, r: { apiKeyId?: string; sessionId?: string }): boolean {
    return (r.apiKeyId !== undefined && r.apiKeyId === p.apiKeyId) || (r.sessionId !== undefined && p.keyId === `session:${r.sessionId}`);
  }
}
