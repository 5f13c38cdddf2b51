import { Inject, Injectable } from '@nestjs/common';
import type { ApiKey, ApiKeyCreated, Page, PageQuery, Role } from '@gantry/contracts';
import type { z } from 'zod';
import type { ZApiKeyCreate } from '@gantry/contracts';
import { DomainError, notFound } from '../../common/errors';
import { toPage } from '../../common/pagination';
import { hasScope, ownerOf, scopeOf, type Principal } from '../../common/principal';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { ROLE_SCOPES } from '../../common/role-scopes';
import { CredentialRevocations } from '../../common/credential-revocations.service';
import { ChangeEpoch } from '../../common/change-epoch.service';
import { TenantsRepository } from '../tenants/tenants.repository';
import { roleToApi, roleToDb } from '../../common/roles';
import { ApiKeysRepository } from './api-keys.repository';
import { mayRevoke } from './may-revoke';

const RANK: Record<Role, number> = { viewer: 0, member: 1, 'team-admin': 2, 'tenant-admin': 3, 'platform-admin': 4 };

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly tenants: TenantsRepository,
    private readonly revocations: CredentialRevocations,
    private readonly epochs: ChangeEpoch,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A caller can make keys no stronger than itself: a role at most its own, scopes it holds,
   * bound inside its own tenant (and team, for a team-bound caller).
   */
  async create(p: Principal, body: z.output<typeof ZApiKeyCreate>, now = new Date()): Promise<ApiKeyCreated> {
    if (RANK[p.role] < RANK.member) throw new DomainError('forbidden', 'viewers cannot create API keys');
    const role: Role = body.role ?? (p.role === 'platform-admin' ? 'tenant-admin' : p.role);
    if (RANK[role] > RANK[p.role]) {
      throw new DomainError('forbidden', `a ${p.role} cannot create a ${role} key`, [{ field: 'role', problem: 'stronger than the caller' }]);
    }
    const extra = body.scopes.filter((s) => !hasScope(p, s));
    if (extra.length) {
      throw new DomainError('forbidden', `the caller does not hold the scope ${extra.join(', ')}`, [
        { field: 'scopes', problem: `not held: ${extra.join(', ')}` },
      ]);
    }
    const beyondRole = body.scopes.filter((s) => !ROLE_SCOPES[role].includes(s));
    if (beyondRole.length) {
      throw new DomainError('validation_failed', `scopes: a ${role} key cannot hold ${beyondRole.join(', ')}`, [
        { field: 'scopes', problem: `not allowed for the role ${role}: ${beyondRole.join(', ')}` },
      ]);
    }
    if (body.expiresAt && new Date(body.expiresAt) <= now) {
      throw new DomainError('validation_failed', 'expiresAt: must be in the future', [{ field: 'expiresAt', problem: 'must be in the future' }]);
    }
    const { tenantId, teamId } = await this.binding(p, body, role);
    // The new key belongs to the caller's owner: a key made by a key made by a user is the user's.
    const owner = ownerOf(p);
    const max = this.config.auth.maxLiveKeysPerOwner;
    const made = await this.keys.createWithin(
      scopeOf(p),
      {
        name: body.name,
        role: roleToDb(role),
        scopes: [...new Set(body.scopes)],
        tenantId,
        teamId,
        userId: p.userId ?? null,
        owner,
        expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
      },
      max,
      now,
    );
    if (!made) {
      throw new DomainError('conflict', `you already hold ${max} live API keys, the most one user or key chain may hold; revoke one first`, [
        { field: 'name', problem: `live key limit (${max}) reached` },
      ]);
    }
    return { id: made.row.id, prefix: made.row.prefix, key: made.key };
  }

  async list(p: Principal, q: PageQuery): Promise<Page<ApiKey>> {
    return toPage(await this.keys.list(scopeOf(p), q), q, (k) => present(k, mayRevoke(p, k) === null));
  }

  async revoke(p: Principal, id: string): Promise<void> {
    const scope = scopeOf(p);
    const row = await this.keys.find(scope, id);
    if (!row) throw notFound('API key', id);
    const refusal = mayRevoke(p, row);
    if (refusal) throw new DomainError('forbidden', refusal);
    if (!(await this.keys.revoke(scope, id, new Date()))) throw new DomainError('invalid_state', `API key ${id} is already revoked`);
    // Every process's key cache drops its rows before this answer leaves (see ChangeEpoch).
    await this.epochs.changed('api-keys');
    await this.revocations.revoked({ apiKeyId: id });
  }

  private async binding(p: Principal, body: { teamId?: string; tenantId?: string }, role: Role) {
    const scope = scopeOf(p);
    const teamId = body.teamId ?? (role === 'tenant-admin' ? undefined : (p.teamId ?? undefined));
    if (teamId) {
      const team = await this.tenants.findTeam(scope, teamId);
      if (!team) throw notFound('team', teamId);
      return { tenantId: team.tenantId, teamId: team.id };
    }
    if (RANK[role] < RANK['tenant-admin'] && role !== 'member' && role !== 'viewer') {
      throw new DomainError('validation_failed', 'teamId: a team-admin key must be bound to a team', [
        { field: 'teamId', problem: 'required for team-admin keys' },
      ]);
    }
    const tenantId = body.tenantId ?? p.tenantId;
    if (!tenantId) throw new DomainError('validation_failed', 'tenantId: required for a platform admin', [{ field: 'tenantId', problem: 'required' }]);
    if (!(await this.tenants.findTenant(scope, tenantId))) throw notFound('tenant', tenantId);
    if (p.teamId) throw new DomainError('forbidden', 'a team-bound caller can only create keys for its team');
    return { tenantId, teamId: null };
  }
}

function present(
  k: {
    id: string;
    name: string;
    prefix: string;
    role: Parameters<typeof roleToApi>[0];
    scopes: string[];
    tenantId: string | null;
    teamId: string | null;
    createdAt: Date;
    expiresAt: Date | null;
    lastUsedAt: Date | null;
    revokedAt: Date | null;
  },
  canRevoke: boolean,
): ApiKey {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    role: roleToApi(k.role),
    scopes: k.scopes,
    tenantId: k.tenantId,
    teamId: k.teamId,
    createdAt: k.createdAt.toISOString(),
    expiresAt: k.expiresAt?.toISOString() ?? null,
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
    canRevoke: canRevoke && k.revokedAt === null,
  };
}
