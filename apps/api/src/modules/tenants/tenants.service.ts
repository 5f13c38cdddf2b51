import { Injectable } from '@nestjs/common';
import type { Me, Page, PageQuery, Team, TeamCreate, Tenant, TenantCreate } from '@gantry/contracts';
import { DomainError, notFound } from '../../common/errors';
import { isUniqueViolation } from '../../common/prisma-errors';
import { scopeOf, type Principal } from '../../common/principal';
import { requireRole } from '../../common/roles';
import { toPage } from '../../common/pagination';
import { TenantsRepository } from './tenants.repository';
import { presentTeam, presentTenant } from './tenants.presenter';

@Injectable()
export class TenantsService {
  constructor(private readonly repo: TenantsRepository) {}

  async createTenant(p: Principal, body: TenantCreate): Promise<Tenant> {
    requireRole(p, 'platform-admin');
    try {
      return presentTenant(await this.repo.createTenant(scopeOf(p), body));
    } catch (e) {
      if (isUniqueViolation(e))
        throw new DomainError('conflict', `a tenant with slug "${body.slug}" already exists`, [{ field: 'slug', problem: 'already taken' }]);
      throw e;
    }
  }

  async listTenants(p: Principal, q: PageQuery): Promise<Page<Tenant>> {
    return toPage(await this.repo.listTenants(scopeOf(p), q), q, presentTenant);
  }

  async getTenant(p: Principal, id: string): Promise<Tenant> {
    const t = await this.repo.findTenant(scopeOf(p), id);
    if (!t) throw notFound('tenant', id);
    return presentTenant(t);
  }

  async createTeam(p: Principal, tenantId: string, body: TeamCreate): Promise<Team> {
    const tenant = await this.repo.findTenant(scopeOf(p), tenantId);
    if (!tenant) throw notFound('tenant', tenantId);
    requireRole(p, 'tenant-admin');
    try {
      return presentTeam(await this.repo.createTeam(scopeOf(p), tenant.id, body));
    } catch (e) {
      if (isUniqueViolation(e))
        throw new DomainError('conflict', `a team with slug "${body.slug}" already exists in this tenant`, [{ field: 'slug', problem: 'already taken' }]);
      throw e;
    }
  }

  async listTeams(p: Principal, tenantId: string, q: PageQuery): Promise<Page<Team>> {
    const scope = scopeOf(p);
    if (!(await this.repo.findTenant(scope, tenantId))) throw notFound('tenant', tenantId);
    return toPage(await this.repo.listTeams(scope, tenantId, q), q, presentTeam);
  }

  async getTeam(p: Principal, id: string): Promise<Team> {
    const t = await this.repo.findTeam(scopeOf(p), id);
    if (!t) throw notFound('team', id);
    return presentTeam(t);
  }

  async me(p: Principal): Promise<Me> {
    const teams = p.tenantId || p.role === 'platform-admin' ? await this.repo.teamsOf(scopeOf(p)) : [];
    return {
      kind: p.via === 'session' ? 'session' : 'api-key',
      name: p.name,
      userId: p.userId ?? null,
      ...(p.email ? { email: p.email } : {}),
      role: p.role,
      scopes: [...p.scopes],
      tenantId: p.tenantId,
      teamId: p.teamId,
      teams: teams.map(presentTeam),
    };
  }
}
