import { Injectable } from '@nestjs/common';
import { newApiKey, type Prisma, type Role as DbRole } from '@gantry/db';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';

/**
 * API keys. Authentication looks keys up by hash (the secret itself is never stored);
 * management (create, list, revoke) is tenant-scoped.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  findByHash(hash: string) {
    return this.prisma.client.apiKey.findUnique({ where: { hash } });
  }

  /** Revocation and expiry of a key, by id (system-wide: for re-checking a credential in use). */
  validity(id: string) {
    return this.prisma.client.apiKey.findUnique({ where: { id }, select: { revokedAt: true, expiresAt: true } });
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }

  /**
   * Creates a key for `data.owner` unless the owner already holds `maxLive` live keys (then
   * null). Creations for one owner are serialised (a transaction-scoped advisory lock), so
   * concurrent requests cannot pass the cap together.
   */
  async createWithin(
    scope: TenantScope,
    data: {
      name: string;
      role: DbRole;
      scopes: string[];
      tenantId: string | null;
      teamId: string | null;
      userId: string | null;
      owner: string;
      expiresAt: Date | null;
    },
    maxLive: number,
    now: Date,
  ) {
    assertCovers(scope, data, data.teamId ? `team ${data.teamId}` : `tenant ${data.tenantId ?? '(none)'}`);
    return this.prisma.client.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`api-key-owner:${data.owner}`}))`;
      const live = await tx.apiKey.count({
        where: { AND: [this.ownedBy(data.owner), { revokedAt: null }, { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] }] },
      });
      if (live >= maxLive) return null;
      const k = newApiKey();
      const row = await tx.apiKey.create({ data: { ...data, prefix: k.prefix, hash: k.hash } });
      return { row, key: k.key };
    });
  }

  /** Keys of an owner, with rows made before owners were recorded (see keyOwner). */
  private ownedBy(owner: string): Prisma.ApiKeyWhereInput {
    const [kind, id] = [owner.slice(0, owner.indexOf(':')), owner.slice(owner.indexOf(':') + 1)];
    const legacy: Prisma.ApiKeyWhereInput = kind === 'user' ? { owner: null, userId: id } : { owner: null, userId: null, id };
    return { OR: [{ owner }, legacy] };
  }

  list(scope: TenantScope, q: PageQuery) {
    const a = pageArgs(q, 'desc');
    return this.prisma.client.apiKey.findMany({ ...a, where: { AND: [a.where, scopeWhere(scope, 'team-rows')] } });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.client.apiKey.findFirst({ where: { id, ...scopeWhere(scope, 'team-rows') } });
  }

  async revoke(scope: TenantScope, id: string, at: Date): Promise<boolean> {
    const r = await this.prisma.client.apiKey.updateMany({ where: { id, revokedAt: null, ...scopeWhere(scope, 'team-rows') }, data: { revokedAt: at } });
    return r.count === 1;
  }
}
