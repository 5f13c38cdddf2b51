import { Injectable } from '@nestjs/common';
import type { Capacity, Gpu, Node, NodeDetail, Page, PageQuery } from '@gantry/contracts';
import { notFound } from '../../common/errors';
import { toPage } from '../../common/pagination';
import { scopeOf, type Principal } from '../../common/principal';
import { TimelineRepository } from '../events/timeline.repository';
import { presentTimelineEvent } from '../events/timeline.presenter';
import { ClusterRepository } from './cluster.repository';
import { presentGpu, presentNode, presentNodeDetail } from './cluster.presenter';

@Injectable()
export class ClusterService {
  constructor(
    private readonly repo: ClusterRepository,
    private readonly timeline: TimelineRepository,
  ) {}

  async listNodes(p: Principal, q: PageQuery & { leaf?: string; state?: string; gpuModel?: string }): Promise<Page<Node>> {
    const scope = scopeOf(p);
    return toPage(await this.repo.listNodes(q, q), q, (n) => presentNode(scope, n));
  }

  async getNode(p: Principal, id: string): Promise<NodeDetail> {
    const n = await this.repo.findNode(id);
    if (!n) throw notFound('node', id);
    const scope = scopeOf(p);
    const events = await this.timeline.nodeEvents(scope, n.id);
    return presentNodeDetail(scope, n, events.map(presentTimelineEvent));
  }

  async listGpus(p: Principal, q: PageQuery & { nodeId?: string; model?: string; health?: string }): Promise<Page<Gpu>> {
    const scope = scopeOf(p);
    return toPage(await this.repo.listGpus(q, q), q, (g) => presentGpu(scope, g));
  }

  async capacity(): Promise<Capacity> {
    const rows = await this.repo.capacityByModel();
    return {
      byModel: rows.map((r) => ({
        gpuModel: r.gpuModel,
        total: r.total,
        allocated: Math.round(r.allocated * 1000) / 1000,
        unhealthy: r.unhealthy,
        free: Math.max(0, Math.round((r.total - r.unhealthy - r.allocated) * 1000) / 1000),
      })),
    };
  }
}
