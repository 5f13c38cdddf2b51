import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZJobLogs, ZJobLogsQuery } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { JobLogsService } from './job-logs.service';

@ApiTags('jobs')
@Controller('v1/jobs')
export class JobLogsController {
  constructor(private readonly logs: JobLogsService) {}

  @Get(':id/logs')
  @RequireScopes('jobs:read')
  @Route({
    summary: "A job's log: what its replicas wrote (the newest `tail` lines, at or after `since`); collected from the cluster every 2 s",
    query: ZJobLogsQuery,
    ok: ZJobLogs,
    errors: [400, 401, 403, 404],
  })
  read(@Caller() p: Principal, @Param('id') id: string, @Query(new ZodPipe(ZJobLogsQuery, 'query')) q: z.output<typeof ZJobLogsQuery>) {
    return this.logs.read(p, id, q);
  }
}
