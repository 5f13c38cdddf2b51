import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZQuotasPut, ZTeamQuotas, ZTeamUsage, ZTenantQuota, ZTenantQuotaPut, type TenantQuotaPut } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { QuotasService } from './quotas.service';

@ApiTags('quotas')
@Controller('v1')
export class QuotasController {
  constructor(private readonly quotas: QuotasService) {}

  @Get('teams/:id/quotas')
  @RequireScopes('quotas:read')
  @Route({ summary: "A team's quotas per GPU flavour (guaranteed, limit, GPU-hour budget)", ok: ZTeamQuotas, errors: [401, 403, 404] })
  get(@Caller() p: Principal, @Param('id') id: string) {
    return this.quotas.get(p, id);
  }

  @Put('teams/:id/quotas')
  @RequireScopes('quotas:write')
  @Route({
    summary: "Replace a team's quotas (tenant admin; a team admin within the tenant admin's ceilings)",
    body: ZQuotasPut,
    ok: ZTeamQuotas,
    errors: [400, 401, 403, 404, 409],
  })
  put(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZQuotasPut)) body: z.output<typeof ZQuotasPut>) {
    return this.quotas.put(p, id, body);
  }

  @Get('teams/:id/usage')
  @RequireScopes('quotas:read')
  @Route({ summary: 'GPUs in use by flavour against the quota, and GPU-hours this month', ok: ZTeamUsage, errors: [401, 403, 404] })
  usage(@Caller() p: Principal, @Param('id') id: string) {
    return this.quotas.usage(p, id);
  }

  @Get('tenants/:id/quota')
  @RequireScopes('quotas:read')
  @Route({ summary: "The tenant's GPU total and its teams' guaranteed sum", ok: ZTenantQuota, errors: [401, 403, 404] })
  getTenant(@Caller() p: Principal, @Param('id') id: string) {
    return this.quotas.getTenantQuota(p, id);
  }

  @Put('tenants/:id/quota')
  @RequireScopes('quotas:write')
  @Route({ summary: "Set the tenant's GPU total (platform admin)", body: ZTenantQuotaPut, ok: ZTenantQuota, errors: [400, 401, 403, 404, 409] })
  putTenant(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZTenantQuotaPut)) body: TenantQuotaPut) {
    return this.quotas.putTenantQuota(p, id, body.gpuTotal);
  }
}
