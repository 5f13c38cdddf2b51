import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZTeamResumeResult, ZTeamSuspendResult } from '@gantry/contracts';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { JobsService } from './jobs.service';

/** A whole team's jobs in one action (follow-the-sun hand-offs). */
@ApiTags('jobs')
@Controller('v1/teams')
export class TeamJobsController {
  constructor(private readonly jobs: JobsService) {}

  @Post(':id/suspend')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({
    summary: 'Suspend every suspendable active job of a team (training, notebook, vm, cluster): checkpoint and free GPUs',
    ok: ZTeamSuspendResult,
    errors: [400, 401, 403, 404],
  })
  suspend(@Caller() p: Principal, @Param('id') id: string) {
    return this.jobs.suspendTeam(p, id);
  }

  @Post(':id/resume')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({
    summary: 'Resume every suspended job of a team: they are queued again and admitted like any job',
    ok: ZTeamResumeResult,
    errors: [400, 401, 403, 404],
  })
  resume(@Caller() p: Principal, @Param('id') id: string) {
    return this.jobs.resumeTeam(p, id);
  }
}
