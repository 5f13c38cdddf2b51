import { Prisma } from '@gantry/db';
import type { NodeRow } from './cluster.repository';
import { groupBy } from '../../common/group-by';

type NodeScalars = Omit<NodeRow, 'leaf' | 'bareMetalLease' | 'gpus'>;
type GpuScalars = Omit<NodeRow['gpus'][number], 'instances' | 'allocations'>;
type InstanceRow = NodeRow['gpus'][number]['instances'][number];
type AllocationRow = NodeRow['gpus'][number]['allocations'][number];

/** The flat rows of the snapshot's four statements, as Postgres answers them. */
export interface FlatNodeRows {
  nodes: (NodeScalars & {
    leafName: string;
    spineId: string;
    spineName: string;
    leaseName: string | null;
    leaseTenantId: string | null;
    leaseTeamId: string | null;
  })[];
  /** Ordered by node, then index. */
  gpus: GpuScalars[];
  /** Ordered by start. */
  instances: InstanceRow[];
  /** Active allocations; gpuUnits as Postgres prints a numeric. */
  allocations: (Omit<AllocationRow, 'gpuUnits'> & { gpuId: string; gpuUnits: string })[];
}

/**
 * Nested NodeRows (the shape of Prisma's `nodeWithGpus` include) from the flat rows: every node
 * with its leaf and spine, its bare-metal lease, its GPUs by index, each with its MIG slices by
 * start and its active allocations, enum values spelled as Prisma spells them. Pure: one pass
 * over each list, no query per node.
 */
export function assembleNodeRows(flat: FlatNodeRows): NodeRow[] {
  const instancesOf = groupBy(flat.instances, (i) => i.gpuId);
  const allocationsOf = groupBy(flat.allocations, (a) => a.gpuId);
  const gpusOf = new Map<string, NodeRow['gpus']>();
  for (const g of flat.gpus) {
    const list = gpusOf.get(g.nodeId) ?? [];
    gpusOf.set(g.nodeId, list);
    list.push({
      ...g,
      instances: instancesOf.get(g.id) ?? [],
      allocations: (allocationsOf.get(g.id) ?? []).map((a) => ({
        jobId: a.jobId,
        tenantId: a.tenantId,
        migStart: a.migStart,
        milli: a.milli,
        gpuUnits: new Prisma.Decimal(a.gpuUnits),
        cpuMilli: a.cpuMilli,
        memoryMiB: a.memoryMiB,
      })),
    });
  }
  return flat.nodes.map(({ leafName, spineId, spineName, leaseName, leaseTenantId, leaseTeamId, ...n }) => ({
    ...n,
    persona: prismaEnum(n.persona),
    personaTarget: prismaEnum(n.personaTarget),
    powerState: prismaEnum(n.powerState),
    leaf: { id: n.leafId, name: leafName, spineId, spine: { id: spineId, name: spineName } },
    bareMetalLease: n.bareMetalLeaseId === null ? null : { id: n.bareMetalLeaseId, name: leaseName!, tenantId: leaseTenantId!, teamId: leaseTeamId! },
    gpus: gpusOf.get(n.id) ?? [],
  }));
}

/** Enum values that Postgres spells differently from Prisma (`@map` in schema.prisma): Postgres's spelling to Prisma's. */
const PRISMA_SPELLING: Readonly<Record<string, string>> = {
  'vm-passthrough': 'vm_passthrough',
  'powering-down': 'powering_down',
  'powering-up': 'powering_up',
};

/** An enum value read by typed SQL, spelled as Prisma spells it. */
export function prismaEnum<T extends string | null>(value: T): T {
  return (value === null ? value : (PRISMA_SPELLING[value] ?? value)) as T;
}
