import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  page,
  ZEndpoint,
  ZEndpointCreate,
  ZEndpointDetail,
  ZEndpointInvoke,
  ZEndpointInvokeResult,
  ZEndpointScale,
  ZEndpointUpdate,
  ZPageQuery,
  ZSimTraffic,
  ZSimTrafficAccepted,
  type EndpointCreateParsed,
  type EndpointInvoke,
  type EndpointScale,
  type EndpointUpdate,
  type SimTraffic,
} from '@gantry/contracts';
import { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { EndpointsService } from './endpoints.service';
import { Idempotent } from '../../common/idempotency.interceptor';

const ZEndpointsQuery = ZPageQuery.extend({ teamId: z.string().min(1).max(64).optional() });

@ApiTags('endpoints')
@Controller('v1/endpoints')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Idempotent()
  @Post()
  @HttpCode(201)
  @RequireScopes('endpoints:write')
  @Route({
    summary: 'Create an inference endpoint (replicas are allocations under the team quota)',
    body: ZEndpointCreate,
    ok: ZEndpoint,
    status: 201,
    errors: [400, 401, 403, 404, 409],
  })
  create(@Caller() p: Principal, @Body(new ZodPipe(ZEndpointCreate)) body: EndpointCreateParsed) {
    return this.endpoints.create(p, body);
  }

  @Get()
  @RequireScopes('endpoints:read')
  @Route({ summary: 'List endpoints, newest first', query: ZEndpointsQuery, ok: page(ZEndpoint) })
  list(@Caller() p: Principal, @Query(new ZodPipe(ZEndpointsQuery, 'query')) q: z.output<typeof ZEndpointsQuery>) {
    return this.endpoints.list(p, q);
  }

  @Get(':id')
  @RequireScopes('endpoints:read')
  @Route({ summary: 'Get an endpoint: replicas, traffic of the last minute, autoscaler state, cold-start p50/p95', ok: ZEndpointDetail })
  get(@Caller() p: Principal, @Param('id') id: string) {
    return this.endpoints.get(p, id);
  }

  @Patch(':id')
  @RequireScopes('endpoints:write')
  @Route({
    summary: 'Change replica bounds, target concurrency, idle time or warm pool',
    body: ZEndpointUpdate,
    ok: ZEndpointDetail,
    errors: [400, 401, 403, 404, 409],
  })
  update(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZEndpointUpdate)) body: EndpointUpdate) {
    return this.endpoints.update(p, id, body);
  }

  @Delete(':id')
  @NoBody()
  @HttpCode(204)
  @RequireScopes('endpoints:write')
  @Route({ summary: 'Delete an endpoint; its replicas are stopped and their GPUs released', status: 204, errors: [400, 401, 403, 404] })
  async remove(@Caller() p: Principal, @Param('id') id: string): Promise<void> {
    await this.endpoints.remove(p, id);
  }

  @Post(':id/scale')
  @HttpCode(200)
  @RequireScopes('endpoints:write')
  @Route({
    summary: 'Scale manually (held for one stable window); 409 beyond maxReplicas or quota',
    body: ZEndpointScale,
    ok: ZEndpointDetail,
    errors: [400, 401, 403, 404, 409],
  })
  scale(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZEndpointScale)) body: EndpointScale) {
    return this.endpoints.scale(p, id, body.replicas);
  }

  @Post(':id/invoke')
  @HttpCode(200)
  @RequireScopes('endpoints:read')
  @Route({
    summary: 'Send a request; at zero replicas the activator holds it until a replica is ready (cold start)',
    body: ZEndpointInvoke,
    ok: ZEndpointInvokeResult,
    errors: [400, 401, 403, 404, 503],
  })
  invoke(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZEndpointInvoke)) body: EndpointInvoke) {
    return this.endpoints.invoke(p, id, body ?? {});
  }
}

@ApiTags('simulation')
@Controller('v1/sim/traffic')
export class SimTrafficController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Post()
  @HttpCode(202)
  @RequireScopes('endpoints:write')
  @Route({
    summary: 'Simulated driver: generate traffic to an endpoint (rps for durationSeconds)',
    body: ZSimTraffic,
    ok: ZSimTrafficAccepted,
    status: 202,
    errors: [400, 401, 403, 404, 409],
  })
  traffic(@Caller() p: Principal, @Body(new ZodPipe(ZSimTraffic)) body: SimTraffic) {
    return this.endpoints.simTraffic(p, body);
  }
}
