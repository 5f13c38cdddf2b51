import type { BareMetalLease } from '@gantry/contracts';
import type { BareMetalLeasesRepository } from './bare-metal-leases.repository';
import { nodeStepToApi } from './lease-states';
import { presentTimelineEvent } from '../events/timeline.presenter';

type LeaseRow = NonNullable<Awaited<ReturnType<BareMetalLeasesRepository['find']>>>;

export function presentLease(row: LeaseRow): BareMetalLease {
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    gpuModel: row.gpuModel,
    count: row.count,
    image: row.image,
    sameLeaf: row.sameLeaf,
    state: row.state,
    stateReason: row.stateReason,
    gpusHeld: row.allocations.reduce((s, a) => s + Number(a.gpuUnits), 0),
    nodes: row.nodes
      .filter((n) => n.bareMetalState !== null)
      .map((n) => ({
        id: n.id,
        name: n.name,
        leaf: n.leaf.name,
        gpus: n._count.gpus,
        state: nodeStepToApi(n.bareMetalState!),
        since: n.bareMetalSince?.toISOString() ?? null,
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
    events: row.events.map(presentTimelineEvent).reverse(),
    createdAt: row.createdAt.toISOString(),
    deployedAt: row.deployedAt?.toISOString() ?? null,
    releasedAt: row.releasedAt?.toISOString() ?? null,
  };
}
