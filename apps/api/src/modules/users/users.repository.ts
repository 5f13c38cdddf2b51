import { Injectable } from '@nestjs/common';
import type { PageQuery } from '@gantry/contracts';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import type { TenantScope } from '../../common/principal';
import type { DbRole } from '../../common/roles';

/** Console users, read through the caller's tenant scope (a team-bound caller sees its team). */
@Injectable()
export class UsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(data: { email: string; name: string; passwordHash: string; role: DbRole; tenantId: string; teamId: string | null }) {
    return this.prisma.client.user.create({ data });
  }

  list(scope: TenantScope, q: PageQuery) {
    const a = pageArgs(q);
    const where = scope.kind === 'platform' ? {} : scope.teamId ? { tenantId: scope.tenantId, teamId: scope.teamId } : { tenantId: scope.tenantId };
    return this.prisma.client.user.findMany({ ...a, where: { AND: [a.where, where] } });
  }
}
