import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZBareMetalLease, ZBareMetalLeaseCreate, ZBareMetalLeaseList } from '@gantry/contracts';
import { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { BareMetalService } from './bare-metal.service';

const ZLeaseQuery = z.object({ teamId: z.string().min(1).max(64).optional() }).strict();

@ApiTags('bare-metal')
@Controller('v1/bare-metal/leases')
export class BareMetalController {
  constructor(private readonly leases: BareMetalService) {}

  @Post()
  @RequireScopes('jobs:write')
  @Route({
    summary: 'Request whole nodes as bare metal: the worker provisions idle nodes with the image; their GPUs count against the team quota',
    body: ZBareMetalLeaseCreate,
    ok: ZBareMetalLease,
    status: 201,
    errors: [400, 401, 403, 404, 409],
  })
  create(@Caller() p: Principal, @Body(new ZodPipe(ZBareMetalLeaseCreate)) body: z.output<typeof ZBareMetalLeaseCreate>) {
    return this.leases.create(p, body);
  }

  @Get()
  @RequireScopes('jobs:read')
  @Route({
    summary: 'Bare-metal leases the caller may see (newest first), optionally of one team',
    query: ZLeaseQuery,
    ok: ZBareMetalLeaseList,
    errors: [400, 401, 403],
  })
  list(@Caller() p: Principal, @Query(new ZodPipe(ZLeaseQuery, 'query')) q: z.output<typeof ZLeaseQuery>) {
    return this.leases.list(p, q.teamId);
  }

  @Get(':id')
  @RequireScopes('jobs:read')
  @Route({ summary: 'A bare-metal lease with its nodes and their steps', ok: ZBareMetalLease, errors: [401, 403, 404] })
  get(@Caller() p: Principal, @Param('id') id: string) {
    return this.leases.get(p, id);
  }

  @Post(':id/suspend')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({
    summary: 'Suspend a deployed lease: its nodes are powered off and stay the team’s (disks kept) until resumed or released',
    ok: ZBareMetalLease,
    errors: [400, 401, 403, 404, 409],
  })
  suspend(@Caller() p: Principal, @Param('id') id: string) {
    return this.leases.suspend(p, id);
  }

  @Post(':id/resume')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({ summary: 'Resume a suspended lease: its nodes are powered on', ok: ZBareMetalLease, errors: [400, 401, 403, 404, 409] })
  resume(@Caller() p: Principal, @Param('id') id: string) {
    return this.leases.resume(p, id);
  }

  @Post(':id/release')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('jobs:write')
  @Route({ summary: 'Release a lease: its nodes’ disks are wiped and the nodes go back to the pool', ok: ZBareMetalLease, errors: [400, 401, 403, 404, 409] })
  release(@Caller() p: Principal, @Param('id') id: string) {
    return this.leases.release(p, id);
  }
}
