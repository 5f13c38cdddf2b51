import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZFairness } from '@gantry/contracts';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { FairnessService } from './fairness.service';

/** Fair share over time between the teams of a tenant. */
@ApiTags('jobs')
@Controller('v1/fairness')
export class FairnessController {
  constructor(private readonly fairness: FairnessService) {}

  @Get()
  @RequireScopes('jobs:read')
  @Route({
    summary: "Fair share between the caller's tenant's teams: entitlement, decayed usage, current share, the head of the queue and why its first job goes next",
    ok: ZFairness,
  })
  get(@Caller() p: Principal) {
    return this.fairness.view(p);
  }
}
