import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  page,
  ZFaultAccepted,
  ZFaultRequest,
  ZIncident,
  ZIncidentActionAccepted,
  ZIncidentListQuery,
  ZMigChangeAccepted,
  ZMigLayoutRequest,
  ZNodeActionRequest,
  ZNodeActionResult,
  ZNodePowerRequest,
  ZPageQuery,
  ZPersonaRequest,
  ZTopology,
  type FaultRequest,
  type MigLayoutRequest,
  type NodeActionRequest,
  type NodePowerRequest,
  type PersonaRequest,
} from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import { NoBody } from '../../common/no-body.interceptor';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { NodeManagerService } from './node-manager.service';

const ZIncidentsQuery = ZPageQuery.extend(ZIncidentListQuery.shape);
const ADMIN_ERRORS = [400, 401, 403, 404, 409];

/** Node manager routes: operator actions (cluster:admin), topology and incidents (cluster:read). */
@ApiTags('cluster')
@Controller('v1')
export class NodeManagerController {
  constructor(private readonly nodes: NodeManagerService) {}

  @Post('nodes/:id/cordon')
  @HttpCode(200)
  @RequireScopes('cluster:admin')
  @Route({ summary: 'Cordon a node: it takes no new work, running jobs stay', body: ZNodeActionRequest, ok: ZNodeActionResult, errors: ADMIN_ERRORS })
  cordon(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZNodeActionRequest)) body: NodeActionRequest) {
    return this.nodes.cordon(p, id, body.reason);
  }

  @Post('nodes/:id/uncordon')
  @NoBody()
  @HttpCode(200)
  @RequireScopes('cluster:admin')
  @Route({ summary: 'Uncordon a cordoned or drained node', ok: ZNodeActionResult, errors: ADMIN_ERRORS })
  uncordon(@Caller() p: Principal, @Param('id') id: string) {
    return this.nodes.uncordon(p, id);
  }

  @Post('nodes/:id/drain')
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Drain a node: checkpoint and move its jobs, then keep it cordoned (202 while draining)',
    body: ZNodeActionRequest,
    ok: ZNodeActionResult,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  drain(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZNodeActionRequest)) body: NodeActionRequest) {
    return this.nodes.drain(p, id, body.reason);
  }

  @Put('nodes/:id/persona')
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Switch a node persona (container, vm-passthrough, inference): drain, reconfigure, ready (202 while switching)',
    body: ZPersonaRequest,
    ok: ZNodeActionResult,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  persona(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZPersonaRequest)) body: PersonaRequest) {
    return this.nodes.setPersona(p, id, body.persona);
  }

  @Post('nodes/:id/power')
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Power a node on or off by hand (202 while it changes; off: 409 while it holds work)',
    body: ZNodePowerRequest,
    ok: ZNodeActionResult,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  power(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZNodePowerRequest)) body: NodePowerRequest) {
    return this.nodes.setPower(p, id, body.state, body.reason);
  }

  @Put('gpus/:id/mig')
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Set a GPU MIG layout ([] = MIG off); 202 while applied; 400 names the broken rule',
    body: ZMigLayoutRequest,
    ok: ZMigChangeAccepted,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  mig(@Caller() p: Principal, @Param('id') id: string, @Body(new ZodPipe(ZMigLayoutRequest)) body: MigLayoutRequest) {
    return this.nodes.setMigLayout(p, id, body);
  }

  @Get('topology')
  @RequireScopes('cluster:read')
  @Route({ summary: 'The cluster tree: spines, leaf switches, nodes with persona, state and GPU use', ok: ZTopology })
  topology() {
    return this.nodes.topology();
  }

  @Get('incidents')
  @RequireScopes('cluster:read')
  @Route({ summary: 'Faults from detection to recovery: timeline, actions taken, MTTR (newest first)', query: ZIncidentsQuery, ok: page(ZIncident) })
  incidents(@Caller() p: Principal, @Query(new ZodPipe(ZIncidentsQuery, 'query')) q: z.output<typeof ZIncidentsQuery>) {
    return this.nodes.incidents(p, q);
  }

  @Post('incidents/:id/burn-in')
  @NoBody()
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Run the burn-in again on hardware that failed it (incident needs-attention), e.g. after replacing the part; 202 while it runs',
    ok: ZIncidentActionAccepted,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  retryBurnIn(@Caller() p: Principal, @Param('id') id: string) {
    return this.nodes.answerIncident(p, id, 'burn-in');
  }

  @Post('incidents/:id/release')
  @NoBody()
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Put hardware that failed burn-in (incident needs-attention) back into service without a pass; resolves the incident',
    ok: ZIncidentActionAccepted,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  release(@Caller() p: Principal, @Param('id') id: string) {
    return this.nodes.answerIncident(p, id, 'release');
  }

  @Post('sim/faults')
  @HttpCode(202)
  @RequireScopes('cluster:admin')
  @Route({
    summary: 'Inject a fault into the simulated cluster (xid, nic-down, node-down, recover, power-up-fail, latent: a defect only load shows)',
    body: ZFaultRequest,
    ok: ZFaultAccepted,
    status: 202,
    errors: ADMIN_ERRORS,
  })
  fault(@Caller() p: Principal, @Body(new ZodPipe(ZFaultRequest)) body: FaultRequest) {
    return this.nodes.injectFault(p, body);
  }
}
