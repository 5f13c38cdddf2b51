import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZPlannerRun, ZPlannerRunCreate } from '@gantry/contracts';
import { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { PlannerService } from './planner.service';

const ZPlannerRunList = z.object({ items: z.array(ZPlannerRun) });

@ApiTags('planner')
@Controller('v1/planner')
export class PlannerController {
  constructor(private readonly planner: PlannerService) {}

  @Post('runs')
  @HttpCode(202)
  @RequireScopes('cluster:read')
  @Route({
    summary: 'Start a what-if run: replay a workload on a cluster under several policies (platform and tenant admins)',
    body: ZPlannerRunCreate,
    ok: ZPlannerRun,
    status: 202,
    errors: [400, 401, 403],
  })
  create(@Caller() p: Principal, @Body(new ZodPipe(ZPlannerRunCreate)) body: z.output<typeof ZPlannerRunCreate>) {
    return this.planner.create(p, body);
  }

  @Get('runs')
  @RequireScopes('cluster:read')
  @Route({ summary: 'Recent what-if runs (without their results)', ok: ZPlannerRunList, errors: [401, 403] })
  list(@Caller() p: Principal) {
    return this.planner.list(p);
  }

  @Get('runs/:id')
  @RequireScopes('cluster:read')
  @Route({ summary: 'A what-if run: status, progress and, once done, the comparison', ok: ZPlannerRun, errors: [401, 403, 404] })
  get(@Caller() p: Principal, @Param('id') id: string) {
    return this.planner.get(p, id);
  }

  @Post('runs/:id/cancel')
  @HttpCode(200)
  @RequireScopes('cluster:read')
  @Route({ summary: 'Cancel a queued or running what-if run', ok: ZPlannerRun, errors: [401, 403, 404, 409] })
  cancel(@Caller() p: Principal, @Param('id') id: string) {
    return this.planner.cancel(p, id);
  }
}
