import { Injectable } from '@nestjs/common';
import type { PageQuery, TeamCreate, TenantCreate } from '@gantry/contracts';
import { Prisma } from '@gantry/db';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assertCovers, scopeWhere, type TenantScope } from '../../common/tenant-scope';

/** Tenants and teams. Every read takes the caller's tenant scope. */
@Injectable()
export class TenantsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A new tenant; its GPU total is 0 (no capacity) unless one is given (null: unbounded). */
  async createTenant(scope: TenantScope, data: TenantCreate) {
    assertCovers(scope, { tenantId: null }, 'a new tenant');
    const gpuTotal = data.gpuTotal === undefined ? 0 : data.gpuTotal;
    return this.prisma.client.tenant.create({
      data: { name: data.name, slug: data.slug, gpuTotal: gpuTotal === null ? null : new Prisma.Decimal(gpuTotal.toFixed(3)) },
    });
  }

  listTenants(scope: TenantScope, q: PageQuery) {
    const a = pageArgs(q);
    return this.prisma.client.tenant.findMany({ ...a, where: { AND: [a.where, scopeWhere(scope, 'tenant')] } });
  }

  findTenant(scope: TenantScope, id: string) {
    return this.prisma.client.tenant.findFirst({ where: { AND: [{ id }, scopeWhere(scope, 'tenant')] } });
  }

  async createTeam(scope: TenantScope, tenantId: string, data: TeamCreate) {
    assertCovers(scope, { tenantId }, `tenant ${tenantId}`);
    return this.prisma.client.team.create({ data: { ...data, tenantId } });
  }

  listTeams(scope: TenantScope, tenantId: string, q: PageQuery) {
    const a = pageArgs(q);
    return this.prisma.client.team.findMany({ ...a, where: { AND: [a.where, scopeWhere(scope, 'team'), { tenantId }] } });
  }

  findTeam(scope: TenantScope, id: string) {
    return this.prisma.client.team.findFirst({ where: { AND: [{ id }, scopeWhere(scope, 'team')] } });
  }

  /** Teams a caller may act for: its team, or all teams of its tenant. */
  teamsOf(scope: TenantScope) {
    return this.prisma.client.team.findMany({ where: scopeWhere(scope, 'team'), orderBy: { name: 'asc' }, take: 200 });
  }
}
