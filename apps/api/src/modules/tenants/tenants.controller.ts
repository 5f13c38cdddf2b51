import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { page, ZMe, ZPageQuery, ZTeam, ZTeamCreate, ZTenant, ZTenantCreate, type PageQuery, type TeamCreate, type TenantCreate } from '@gantry/contracts';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { TenantsService } from './tenants.service';
import { Idempotent } from '../../common/idempotency.interceptor';

@ApiTags('tenants')
@Controller('v1')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Get('me')
  @Route({ summary: 'Who the caller is, with the teams it may act for', ok: ZMe })
  me(@Caller() p: Principal) {
    return this.tenants.me(p);
  }

  @Idempotent()
  @Post('tenants')
  @HttpCode(201)
  @RequireScopes('tenants:admin')
  @Route({ summary: 'Create a tenant (platform admin)', body: ZTenantCreate, ok: ZTenant, status: 201, errors: [400, 401, 403, 409] })
  createTenant(@Caller() p: Principal, @Body(new ZodPipe(ZTenantCreate)) body: TenantCreate) {
    return this.tenants.createTenant(p, body);
  }

  @Get('tenants')
  @Route({ summary: 'List the tenants the caller can see', query: ZPageQuery, ok: page(ZTenant) })
  listTenants(@Caller() p: Principal, @Query(new ZodPipe(ZPageQuery, 'query')) q: PageQuery) {
    return this.tenants.listTenants(p, q);
  }

  @Get('tenants/:id')
  @Route({ summary: 'Get a tenant', ok: ZTenant })
  getTenant(@Caller() p: Principal, @Param('id') id: string) {
    return this.tenants.getTenant(p, id);
  }

  @Idempotent()
  @Post('tenants/:tenantId/teams')
  @HttpCode(201)
  @Route({ summary: 'Create a team (tenant admin)', body: ZTeamCreate, ok: ZTeam, status: 201, errors: [400, 401, 403, 404, 409] })
  createTeam(@Caller() p: Principal, @Param('tenantId') tenantId: string, @Body(new ZodPipe(ZTeamCreate)) body: TeamCreate) {
    return this.tenants.createTeam(p, tenantId, body);
  }

  @Get('tenants/:tenantId/teams')
  @Route({ summary: 'List the teams of a tenant', query: ZPageQuery, ok: page(ZTeam) })
  listTeams(@Caller() p: Principal, @Param('tenantId') tenantId: string, @Query(new ZodPipe(ZPageQuery, 'query')) q: PageQuery) {
    return this.tenants.listTeams(p, tenantId, q);
  }

  @Get('teams/:id')
  @Route({ summary: 'Get a team', ok: ZTeam })
  getTeam(@Caller() p: Principal, @Param('id') id: string) {
    return this.tenants.getTeam(p, id);
  }
}
