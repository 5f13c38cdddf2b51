import { Prisma, type Sql } from '@gantry/db';
import type { NodeRow } from './cluster.repository';

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
    bareMetalLease:
      n.bareMetalLeaseId === null ? null : { id: n.bareMetalLeaseId, name: leaseName!, tenantId: leaseTenantId!, teamId: leaseTeamId! },
    gpus: gpusOf.get(n.id) ?? [],
  }));
}

/**
 * The snapshot's rows in four statements of typed SQL (nodes by name, GPUs, MIG slices, active
 * allocations), for every node (`ids` undefined) or the nodes `ids` (one array parameter, so any
 * number of nodes fits in one statement, far from Postgres's 65,535 bind parameters). Replaces Prisma's nested include on this path: at
 * 10,000 nodes its result nesting and per-row objects cost seconds of the worker's CPU.
 */
export async function readNodeRows(sql: Sql, ids?: readonly string[]): Promise<NodeRow[]> {
  if (ids && !ids.length) return [];
  const onNodes = (column: string) => (ids ? `AND ${column} = ANY($1::text[])` : '');
  const values = ids ? [ids] : [];
  const [nodes, gpus, instances, allocations] = await Promise.all([
    sql.query<FlatNodeRows['nodes'][number]>(
      `SELECT n.*, l.name AS "leafName", l."spineId", s.name AS "spineName",
         b.name AS "leaseName", b."tenantId" AS "leaseTenantId", b."teamId" AS "leaseTeamId"
       FROM "Node" n JOIN "Leaf" l ON l.id = n."leafId" JOIN "Spine" s ON s.id = l."spineId"
       LEFT JOIN "BareMetalLease" b ON b.id = n."bareMetalLeaseId"
       WHERE true ${onNodes('n.id')} ORDER BY n.name`,
      values,
    ),
    sql.query<GpuScalars>(`SELECT g.* FROM "Gpu" g WHERE true ${onNodes('g."nodeId"')} ORDER BY g."nodeId", g.index`, values),
    sql.query<InstanceRow>(
      `SELECT i.* FROM "GpuInstance" i JOIN "Gpu" g ON g.id = i."gpuId" WHERE true ${onNodes('g."nodeId"')} ORDER BY i.start`,
      values,
    ),
    sql.query<FlatNodeRows['allocations'][number]>(
      `SELECT a."gpuId", a."jobId", a."tenantId", a."migStart", a.milli, a."gpuUnits"::text AS "gpuUnits", a."cpuMilli", a."memoryMiB"
       FROM "Allocation" a WHERE a."endedAt" IS NULL ${onNodes('a."nodeId"')}`,
      values,
    ),
  ]);
  return assembleNodeRows({ nodes, gpus, instances, allocations });
}

/** Enum values that Postgres spells differently from Prisma (`@map` in schema.prisma): Postgres's spelling to Prisma's. */
const PRISMA_SPELLING: Readonly<Record<string, string>> = { 'vm-passthrough': 'vm_passthrough', 'powering-down': 'powering_down', 'powering-up': 'powering_up' };

function prismaEnum<T extends string | null>(value: T): T {
  return (value === null ? value : (PRISMA_SPELLING[value] ?? value)) as T;
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = out.get(k);
    if (list) list.push(x);
    else out.set(k, [x]);
  }
  return out;
}
