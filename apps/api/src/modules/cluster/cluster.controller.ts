import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { page, ZGpu, ZGpuListQuery, ZNode, ZNodeDetail, ZNodeListQuery, ZPageQuery } from '@gantry/contracts';
import type { z } from 'zod';
import { ZodPipe } from '../../common/zod.pipe';
import { Route } from '../../common/openapi.decorators';
import type { Principal } from '../../common/principal';
import { Caller, RequireScopes } from '../../common/auth.decorators';
import { ClusterService } from './cluster.service';

const ZNodesQuery = ZPageQuery.extend(ZNodeListQuery.shape);
const ZGpusQuery = ZPageQuery.extend(ZGpuListQuery.shape);

@ApiTags('cluster')
@Controller('v1')
@RequireScopes('cluster:read')
export class ClusterController {
  constructor(private readonly cluster: ClusterService) {}

  @Get('nodes')
  @Route({ summary: 'List nodes with persona, state and GPU use', query: ZNodesQuery, ok: page(ZNode) })
  listNodes(@Caller() p: Principal, @Query(new ZodPipe(ZNodesQuery, 'query')) q: z.output<typeof ZNodesQuery>) {
    return this.cluster.listNodes(p, q);
  }

  @Get('nodes/:id')
  @Route({ summary: 'Get a node (by id or name) with its GPUs', ok: ZNodeDetail })
  getNode(@Caller() p: Principal, @Param('id') id: string) {
    return this.cluster.getNode(p, id);
  }

  @Get('gpus')
  @Route({ summary: 'List GPUs with mode, health, MIG layout and use', query: ZGpusQuery, ok: page(ZGpu) })
  listGpus(@Caller() p: Principal, @Query(new ZodPipe(ZGpusQuery, 'query')) q: z.output<typeof ZGpusQuery>) {
    return this.cluster.listGpus(p, q);
  }
}
