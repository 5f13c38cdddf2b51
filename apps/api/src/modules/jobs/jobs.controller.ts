import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { page, ZJob, ZJobCreate, ZJobDetail, ZJobListQuery, ZJobsSummary, ZJobsSummaryQuery, ZPageQuery, type JobCreateParsed } from '@gantry/contracts';
import { z } from 'zod';
import { ZodPipe, parseOr400 } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { JobsService } from './jobs.service';

const ZJobsQuery = ZPageQuery.extend(ZJobListQuery.shape);
const ZIdempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
  .optional();

@ApiTags('jobs')
@Controller('v1/jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Post()
  @RequireScopes('jobs:write')
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'a retry with the same key returns the first job' })
  @Route({ summary: 'Submit a job', body: ZJobCreate, ok: ZJob, status: 201, errors: [400, 401, 403, 404, 409] })
  async submit(
    @Caller() p: Principal,
    @Body(new ZodPipe(ZJobCreate)) body: JobCreateParsed,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    const key = parseOr400(z.object({ 'Idempotency-Key': ZIdempotencyKey }), { 'Idempotency-Key': idempotencyKey }, 'query');
    const { job, replayed } = await this.jobs.submit(p, body, key['Idempotency-Key']);
    res.status(replayed ? 200 : 201);
    return job;
  }

  @Get()
  @RequireScopes('jobs:read')
  @Route({ summary: 'List jobs, newest first', query: ZJobsQuery, ok: page(ZJob) })
  list(@Caller() p: Principal, @Query(new ZodPipe(ZJobsQuery, 'query')) q: z.output<typeof ZJobsQuery>) {
    return this.jobs.list(p, q);
  }

  @Get('summary')
  @RequireScopes('jobs:read')
  @Route({ summary: "Jobs in each state and the head of the queue (the console's Overview)", query: ZJobsSummaryQuery, ok: ZJobsSummary })
  summary(@Caller() p: Principal, @Query(new ZodPipe(ZJobsSummaryQuery, 'query')) q: z.output<typeof ZJobsSummaryQuery>) {
    return this.jobs.summary(p, q);
  }

  @Get(':id')
  @RequireScopes('jobs:read')
  @Route({ summary: 'Get a job with its placement, reasons and events', ok: ZJobDetail })
  get(@Caller() p: Principal, @Param('id') id: string) {
    return this.jobs.get(p, id);
  }

  @Post(':id/suspend')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({ summary: 'Suspend a job: checkpoint it and free its GPUs (training, notebook, vm, cluster)', ok: ZJob, errors: [400, 401, 403, 404, 409] })
  suspend(@Caller() p: Principal, @Param('id') id: string) {
    return this.jobs.suspend(p, id);
  }

  @Post(':id/resume')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({ summary: 'Resume a suspended job: it is queued again with its checkpoint', ok: ZJob, errors: [400, 401, 403, 404, 409] })
  resume(@Caller() p: Principal, @Param('id') id: string) {
    return this.jobs.resume(p, id);
  }

  @Post(':id/cancel')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({ summary: 'Cancel a job; its GPUs are released at once', ok: ZJob, errors: [400, 401, 403, 404, 409] })
  cancel(@Caller() p: Principal, @Param('id') id: string) {
    return this.jobs.cancel(p, id);
  }
}
