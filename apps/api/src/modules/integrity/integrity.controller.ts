import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZIntegrityQuery, ZIntegrityReport, type IntegrityQuery } from '@gantry/contracts';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { RequireScopes } from '../../common/auth.decorators';
import { IntegrityService } from './integrity.service';

/** Operators: no GPU slot held twice, no job lost or stuck, every layout valid (docs/reliability.md). */
@ApiTags('cluster')
@Controller('v1/cluster')
export class IntegrityController {
  constructor(private readonly integrity: IntegrityService) {}

  @Get('integrity')
  @RequireScopes('cluster:admin')
  @Route({
    summary:
      'Check the invariants over the database now (double-booked GPUs, invalid MIG layouts, teams over limit, orphaned allocations, inconsistent jobs; `settled=true`: also stuck transitions)',
    query: ZIntegrityQuery,
    ok: ZIntegrityReport,
    errors: [400, 401, 403],
  })
  check(@Query(new ZodPipe(ZIntegrityQuery, 'query')) q: IntegrityQuery) {
    return this.integrity.check(q.settled === 'true');
  }
}
