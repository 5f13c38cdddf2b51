import { Injectable } from '@nestjs/common';
import type { Page, PageQuery, User, UserCreate } from '@gantry/contracts';
import { DomainError, notFound } from '../../common/errors';
import { isUniqueViolation } from '../../common/prisma-errors';
import { toPage } from '../../common/pagination';
import { scopeOf, type Principal } from '../../common/principal';
import { requireRole, roleToDb } from '../../common/roles';
import { TenantsRepository } from '../tenants/tenants.repository';
import { checkPassword, hashPassword } from './password';
import { ROLE_RANK } from '../../common/role-scopes';
import { UsersRepository } from './users.repository';
import { presentUser } from './users.presenter';

@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly tenants: TenantsRepository,
  ) {}

  /**
   * Tenant admins add users to their tenant, team admins to their team; nobody creates a user
   * stronger than itself. Team roles (team-admin, member, viewer) need a team.
   */
  async create(p: Principal, body: UserCreate): Promise<User> {
    requireRole(p, 'tenant-admin', 'team-admin');
    if (ROLE_RANK[body.role] > ROLE_RANK[p.role]) {
      throw new DomainError('forbidden', `a ${p.role} cannot create a ${body.role} user`, [{ field: 'role', problem: 'stronger than the caller' }]);
    }
    checkPassword(body.password, body.email);
    const scope = scopeOf(p);
    const teamId = body.teamId ?? (body.role === 'tenant-admin' ? undefined : (p.teamId ?? undefined));
    let tenantId: string;
    if (teamId) {
      const team = await this.tenants.findTeam(scope, teamId);
      if (!team) throw notFound('team', teamId);
      tenantId = team.tenantId;
    } else {
      if (body.role !== 'tenant-admin')
        throw new DomainError('validation_failed', `teamId: a ${body.role} user must belong to a team`, [
          { field: 'teamId', problem: 'required for team roles' },
        ]);
      const t = body.tenantId ?? p.tenantId;
      if (!t || !(await this.tenants.findTenant(scope, t))) throw notFound('tenant', t ?? '(none)');
      tenantId = t;
    }
    if (body.role === 'tenant-admin' && body.teamId)
      throw new DomainError('validation_failed', 'teamId: a tenant-admin is not bound to a team', [
        { field: 'teamId', problem: 'not allowed for tenant-admin' },
      ]);
    try {
      const row = await this.users.create(scope, {
        email: body.email,
        name: body.name,
        passwordHash: await hashPassword(body.password),
        role: roleToDb(body.role),
        tenantId,
        teamId: teamId ?? null,
      });
      return presentUser(row);
    } catch (e) {
      // Unique per tenant: only an address already used in this same tenant collides, so the
      // answer tells nothing about other tenants' users.
      if (isUniqueViolation(e))
        throw new DomainError('conflict', `email: a user with email ${body.email} already exists in this tenant`, [
          { field: 'email', problem: 'already taken in this tenant' },
        ]);
      throw e;
    }
  }

  async list(p: Principal, q: PageQuery): Promise<Page<User>> {
    return toPage(await this.users.list(scopeOf(p), q), q, presentUser);
  }
}
