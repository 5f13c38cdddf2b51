import { Inject, Injectable, Logger } from '@nestjs/common';
import { apiKeyPrefix, hashApiKey } from '@gantry/db';
import { SCOPES, type Scope } from '@gantry/contracts';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { DomainError } from '../../common/errors';
import { safeEqual } from '../../common/safe-equal';
import { keyOwner, type Principal } from '../../common/principal';
import { ApiKeysRepository } from '../api-keys/api-keys.repository';
import { roleToApi } from '../../common/roles';
import { ROLE_SCOPES } from '../../common/role-scopes';
import { ChangeEpoch, EpochCache } from '../../common/change-epoch.service';

const TOUCH_EVERY_MS = 60_000;
/** How long a key row may be reused at most (revocations reach every process at once through ChangeEpoch). */
const KEY_CACHE_MS = 10_000;

type KeyRow = NonNullable<Awaited<ReturnType<ApiKeysRepository['findByHash']>>>;

@Injectable()
export class AuthService {
  private readonly logger = new Logger('auth');
  private readonly bootstrapHash?: string;
  private readonly cache: EpochCache<KeyRow>;

  constructor(
    private readonly keys: ApiKeysRepository,
    epochs: ChangeEpoch,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (config.bootstrapAdminKey) this.bootstrapHash = hashApiKey(config.bootstrapAdminKey);
    this.cache = new EpochCache<KeyRow>(epochs, 'api-keys', KEY_CACHE_MS);
  }

  /** Resolves an `Authorization` header to a principal, or throws 401. */
  async authenticate(header: string | undefined, now = new Date()): Promise<Principal> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) throw new DomainError('unauthenticated', 'missing API key: send "Authorization: Bearer gk_..."');
    const key = m[1]!;
    if (!apiKeyPrefix(key)) throw new DomainError('unauthenticated', 'invalid API key');
    return this.byHash(hashApiKey(key), now);
  }

  /**
   * The principal of the key whose sha256 is `hash`, or 401. Keys are found by that hash (a
   * unique index lookup, never a comparison of the secret); the bootstrap key, which has no
   * row, is compared in constant time. Rows are cached per process until a key changes anywhere
   * (ChangeEpoch 'api-keys': a revocation is seen by every process on its next request);
   * revocation and expiry are checked on every use.
   */
  async byHash(hash: string, now = new Date()): Promise<Principal> {
    const since = performance.now();
    if (this.bootstrapHash && safeEqual(this.bootstrapHash, hash)) {
      return {
        keyId: 'bootstrap',
        name: 'bootstrap platform admin',
        role: 'platform-admin',
        scopes: SCOPES,
        tenantId: null,
        teamId: null,
        via: 'api-key',
        owner: 'key:bootstrap',
        apiKeyId: 'bootstrap',
        since,
      };
    }
    const row = await this.cache.get(hash, () => this.keys.findByHash(hash), undefined, since);
    if (!row) throw new DomainError('unauthenticated', 'invalid API key');
    const problem = keyProblem(row, now);
    if (problem) throw new DomainError('unauthenticated', problem);
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > TOUCH_EVERY_MS) {
      this.cache.update(hash, (r) => ({ ...r, lastUsedAt: now }));
      this.keys.touch(row.id, now).catch((e: unknown) => this.logger.warn(`could not record key use: ${String(e)}`));
    }
    return { ...keyPrincipal(row), since };
  }
}

/** Why a stored key cannot be used now (revoked, expired), or null when it can. */
export function keyProblem(row: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): string | null {
  if (row.revokedAt) return 'this API key was revoked';
  if (row.expiresAt && row.expiresAt <= now) return 'this API key has expired';
  return null;
}

/**
 * The principal of a stored key. Its role caps its scopes: a key holds only the scopes its role
 * may have (ROLE_SCOPES), whatever was stored, so a viewer key can never write.
 */
export function keyPrincipal(row: {
  id: string;
  name: string;
  role: Parameters<typeof roleToApi>[0];
  scopes: string[];
  tenantId: string | null;
  teamId: string | null;
  userId: string | null;
  owner: string | null;
}): Principal {
  const role = roleToApi(row.role);
  const allowed = ROLE_SCOPES[role];
  return {
    keyId: row.id,
    name: row.name,
    role,
    scopes: row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s) && allowed.includes(s as Scope)),
    tenantId: row.tenantId,
    teamId: row.teamId,
    via: 'api-key',
    userId: row.userId,
    owner: keyOwner(row),
    apiKeyId: row.id,
  };
}
