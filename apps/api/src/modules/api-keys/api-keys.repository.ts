import { Injectable } from '@nestjs/common';
import { newApiKey, type Role as DbRole } from '@gantry/db';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { tenantWhere, type TenantScope } from '../../common/principal';

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

  async touch(id: string, at: Date): Promise<void> {
    await this.prisma.client.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }

  async create(data: { name: string; role: DbRole; scopes: string[]; tenantId: string | null; teamId: string | null; expiresAt: Date | null }) {
    const k = newApiKey();
    const row = await this.prisma.client.apiKey.create({ data: { ...data, prefix: k.prefix, hash: k.hash } });
    return { row, key: k.key };
  }

  list(scope: TenantScope, q: PageQuery) {
    const a = pageArgs(q, 'desc');
    return this.prisma.client.apiKey.findMany({ ...a, where: { AND: [a.where, tenantWhere(scope)] } });
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.client.apiKey.findFirst({ where: { id, ...tenantWhere(scope) } });
  }

  async revoke(scope: TenantScope, id: string, at: Date): Promise<boolean> {
    const r = await this.prisma.client.apiKey.updateMany({ where: { id, revokedAt: null, ...tenantWhere(scope) }, data: { revokedAt: at } });
    return r.count === 1;
  }
}
