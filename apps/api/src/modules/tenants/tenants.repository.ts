import { Injectable } from '@nestjs/common';
import type { PageQuery, TeamCreate, TenantCreate } from '@gantry/contracts';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import type { TenantScope } from '../../common/principal';

/** Tenants and teams. Every read takes the caller's tenant scope. */
@Injectable()
export class TenantsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A new tenant; its GPU total is 0 (no capacity) unless one is given (null: unbounded). */
  createTenant(data: TenantCreate) {
    const gpuTotal = data.gpuTotal === undefined ? 0 : data.gpuTotal;
    return this.prisma.client.tenant.create({
      data: { name: data.name, slug: data.slug, gpuTotal: gpuTotal === null ? null : new Prisma.Decimal(gpuTotal.toFixed(3)) },
    });
  }

  listTenants(scope: TenantScope, q: PageQuery) {
    const a = pageArgs(q);
    const where = scope.kind === 'platform' ? a.where : { AND: [a.where, { id: scope.tenantId }] };
    return this.prisma.client.tenant.findMany({ ...a, where });
  }

  findTenant(scope: TenantScope, id: string) {
    if (scope.kind === 'tenant' && scope.tenantId !== id) return Promise.resolve(null);
    return this.prisma.client.tenant.findUnique({ where: { id } });
  }

  createTeam(tenantId: string, data: TeamCreate) {
    return this.prisma.client.team.create({ data: { ...data, tenantId } });
  }

  listTeams(scope: TenantScope, tenantId: string, q: PageQuery) {
    const a = pageArgs(q);
    return this.prisma.client.team.findMany({ ...a, where: { AND: [a.where, this.teamWhere(scope), { tenantId }] } });
  }

  findTeam(scope: TenantScope, id: string) {
    return this.prisma.client.team.findFirst({ where: { AND: [{ id }, this.teamWhere(scope)] } });
  }

  /** Teams a caller may act for: its team, or all teams of its tenant. */
  teamsOf(scope: TenantScope) {
    return this.prisma.client.team.findMany({ where: this.teamWhere(scope), orderBy: { name: 'asc' }, take: 200 });
  }

  private teamWhere(scope: TenantScope): { tenantId?: string; id?: string } {
    if (scope.kind === 'platform') return {};
    return scope.teamId ? { tenantId: scope.tenantId, id: scope.teamId } : { tenantId: scope.tenantId };
  }
}
