import { Injectable } from '@nestjs/common';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';
import type { DbRole } from '../../common/roles';

/** Console users, read through the caller's tenant scope (a team-bound caller sees its team). */
@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  async create(scope: TenantScope, data: { email: string; name: string; passwordHash: string; role: DbRole; tenantId: string; teamId: string | null }) {
    assertCovers(scope, data, `tenant ${data.tenantId}`);
    return this.prisma.client.user.create({ data });
  }

  list(scope: TenantScope, q: PageQuery) {
    const a = pageArgs(q);
    return this.prisma.client.user.findMany({ ...a, where: { AND: [a.where, scopeWhere(scope, 'team-rows')] } });
  }
}
