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
    list.push(
      gpuRow(
        g,
        instancesOf.get(g.id) ?? [],
        (allocationsOf.get(g.id) ?? []).map((a) => ({
          jobId: a.jobId,
          tenantId: a.tenantId,
          migStart: a.migStart,
          milli: a.milli,
          gpuUnits: new Prisma.Decimal(a.gpuUnits),
          cpuMilli: a.cpuMilli,
          memoryMiB: a.memoryMiB,
        })),
      ),
    );
  }
  return flat.nodes.map((n) => nodeRow(n, gpusOf.get(n.id) ?? []));
}

/*
 * The rows are built as object literals that name every column, not by spreading the driver's
 * row (`{ ...g, instances, allocations }`): V8 gave each object a spread builds at such a site
 * a hidden class of its own (a map, a descriptor array and a property array: ~660 bytes per
 * object), 80,000 GPU rows and 10,000 node rows a worker keeps at 10,000 nodes: ~60 MB of its
 * live heap, and every access to them megamorphic. A literal shares one class, fields in the
 * object. The row types make the compiler name any column added to the schema here.
 */

function gpuRow(g: GpuScalars, instances: InstanceRow[], allocations: AllocationRow[]): NodeRow['gpus'][number] {
  return {
    id: g.id,
    nodeId: g.nodeId,
    index: g.index,
    model: g.model,
    memoryMiB: g.memoryMiB,
    nvlinkDomain: g.nvlinkDomain,
    migCapable: g.migCapable,
    health: g.health,
    mode: g.mode,
    schedulable: g.schedulable,
    migTarget: g.migTarget,
    migRequestedAt: g.migRequestedAt,
    migChangedAt: g.migChangedAt,
    startRefusedUntil: g.startRefusedUntil,
    startRefusals: g.startRefusals,
    version: g.version,
    instances,
    allocations,
  };
}

function nodeRow(n: FlatNodeRows['nodes'][number], gpus: NodeRow['gpus']): NodeRow {
  return {
    id: n.id,
    name: n.name,
    leafId: n.leafId,
    persona: prismaEnum(n.persona),
    state: n.state,
    stateReason: n.stateReason,
    cpuMilli: n.cpuMilli,
    memoryMiB: n.memoryMiB,
    labels: n.labels,
    personaTarget: prismaEnum(n.personaTarget),
    personaChangedAt: n.personaChangedAt,
    transitionStartedAt: n.transitionStartedAt,
    transitionEtaAt: n.transitionEtaAt,
    powerState: prismaEnum(n.powerState),
    powerChangedAt: n.powerChangedAt,
    version: n.version,
    createdAt: n.createdAt,
    bareMetalLeaseId: n.bareMetalLeaseId,
    bareMetalState: n.bareMetalState,
    bareMetalSince: n.bareMetalSince,
    leaf: { id: n.leafId, name: n.leafName, spineId: n.spineId, spine: { id: n.spineId, name: n.spineName } },
    bareMetalLease: n.bareMetalLeaseId === null ? null : { id: n.bareMetalLeaseId, name: n.leaseName!, tenantId: n.leaseTenantId!, teamId: n.leaseTeamId! },
    gpus,
  };
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
