import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { z } from 'zod';
import {
  ZCapacity,
  ZGpuHeatmap,
  ZIdleAllocations,
  ZIdleQuery,
  ZUtilizationQuery,
  ZUtilizationReport,
  type Capacity,
  type UtilizationReport,
} from '@gantry/contracts';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { ClusterService } from '../cluster/cluster.service';
import { UtilizationService } from './utilization.service';

@ApiTags('observability')
@Controller('v1')
@RequireScopes('cluster:read')
export class UtilizationController {
  constructor(
    private readonly service: UtilizationService,
    private readonly cluster: ClusterService,
  ) {}

  @Get('utilization')
  @Route({
    summary:
      'Without groupBy: capacity by GPU model (total, allocated, free, unhealthy). With groupBy: GPU-hours, measured use, energy and cost per group and bucket (format=csv for an export)',
    query: ZUtilizationQuery,
    ok: z.union([ZCapacity, ZUtilizationReport]),
  })
  async utilization(
    @Caller() p: Principal,
    @Query(new ZodPipe(ZUtilizationQuery, 'query')) q: z.output<typeof ZUtilizationQuery>,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Capacity | UtilizationReport | string> {
    if (!q.groupBy) return this.cluster.capacity();
    const req = { groupBy: q.groupBy, from: q.from, to: q.to, step: q.step };
    if (q.format !== 'csv') return this.service.report(p, req);
    const csv = await this.service.reportCsv(p, req);
    res.setHeader('content-type', 'text/csv; charset=utf-8');
    res.setHeader('content-disposition', `attachment; filename="gantry-utilization-${q.groupBy}.csv"`);
    return csv;
  }

  @Get('utilization/idle')
  @Route({
    summary: 'GPUs allocated but idle (SM under the threshold for longer than the set time), with who holds them',
    query: ZIdleQuery,
    ok: ZIdleAllocations,
  })
  idle(@Caller() p: Principal, @Query(new ZodPipe(ZIdleQuery, 'query')) q: z.output<typeof ZIdleQuery>) {
    return this.service.idle(p, q);
  }

  @Get('utilization/gpus')
  @Route({ summary: 'Live per-GPU SM %, memory, power and allocation, column-oriented (the heatmap)', ok: ZGpuHeatmap })
  heatmap() {
    return this.service.heatmap();
  }
}
