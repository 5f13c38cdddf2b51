import { Inject, Injectable, Logger } from '@nestjs/common';
import { apiKeyPrefix, hashApiKey } from '@gantry/db';
import { SCOPES, type Scope } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import { safeEqual } from '../../common/safe-equal';
import type { Principal } from '../../common/principal';
import { ApiKeysRepository } from '../api-keys/api-keys.repository';
import { roleToApi } from './roles';

const TOUCH_EVERY_MS = 60_000;

@Injectable()
export class AuthService {
  private readonly logger = new Logger('auth');
  private readonly bootstrapHash?: string;

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (config.bootstrapAdminKey) this.bootstrapHash = hashApiKey(config.bootstrapAdminKey);
  }

  /** Resolves an `Authorization` header to a principal, or throws 401. */
  async authenticate(header: string | undefined, now = new Date()): Promise<Principal> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) throw new DomainError('unauthenticated', 'missing API key: send "Authorization: Bearer gk_..."');
    const key = m[1]!;
    if (!apiKeyPrefix(key)) throw new DomainError('unauthenticated', 'invalid API key');
    // Other keys are found by the sha256 of the whole key (a unique index lookup, never a
    // comparison of the secret); the bootstrap key, which has no row, is compared in constant time.
    const hash = hashApiKey(key);
    if (this.bootstrapHash && safeEqual(this.bootstrapHash, hash)) {
      return { keyId: 'bootstrap', name: 'bootstrap platform admin', role: 'platform-admin', scopes: SCOPES, tenantId: null, teamId: null, via: 'api-key' };
    }
    const row = await this.keys.findByHash(hash);
    if (!row) throw new DomainError('unauthenticated', 'invalid API key');
    if (row.revokedAt) throw new DomainError('unauthenticated', 'this API key was revoked');
    if (row.expiresAt && row.expiresAt <= now) throw new DomainError('unauthenticated', 'this API key has expired');
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
      this.keys.touch(row.id, now).catch((e: unknown) => this.logger.warn(`could not record key use: ${String(e)}`));
    }
    return {
      keyId: row.id,
      name: row.name,
      role: roleToApi(row.role),
      scopes: row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
      tenantId: row.tenantId,
      teamId: row.teamId,
      via: 'api-key',
      userId: row.userId,
    };
  }
}
