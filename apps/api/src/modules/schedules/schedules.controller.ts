import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZSchedule, ZScheduleCreate, ZScheduleList } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { SchedulesService } from './schedules.service';

@ApiTags('schedules')
@Controller('v1')
export class SchedulesController {
  constructor(private readonly schedules: SchedulesService) {}

  @Post('teams/:id/schedules')
  @RequireScopes('jobs:write')
  @Route({
    summary: 'Add a suspend or resume window for a team (or one of its jobs): a 5-field cron in an IANA time zone',
    body: ZScheduleCreate,
    ok: ZSchedule,
    status: 201,
    errors: [400, 401, 403, 404],
  })
  create(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZScheduleCreate)) body: z.output<typeof ZScheduleCreate>) {
    return this.schedules.create(p, id, body);
  }

  @Get('teams/:id/schedules')
  @RequireScopes('jobs:read')
  @Route({ summary: "A team's suspend and resume windows", ok: ZScheduleList, errors: [401, 403, 404] })
  list(@Caller() p: Principal, @Param('id') id: string) {
    return this.schedules.list(p, id);
  }

  @Delete('schedules/:id')
  @NoBody()
  @HttpCode(204)
  @RequireScopes('jobs:write')
  @Route({ summary: 'Delete a suspend or resume window', status: 204, errors: [400, 401, 403, 404] })
  remove(@Caller() p: Principal, @Param('id') id: string) {
    return this.schedules.remove(p, id);
  }
}
