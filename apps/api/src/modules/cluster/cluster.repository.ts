import { Injectable } from '@nestjs/common';
import type { Inventory } from '@gantry/driver';
import { Prisma } from '@gantry/db';
import { migProfile } from '@gantry/scheduler';
import { PrismaService } from '../../common/prisma.service';
import { pageArgs } from '../../common/pagination';
import { assembleNodeRows, type FlatNodeRows } from './node-rows';
import type { PageQuery } from '@gantry/contracts';

const ACTIVE = { endedAt: null } as const;

export const nodeWithGpus = {
  leaf: { include: { spine: true } },
  bareMetalLease: { select: { id: true, name: true, tenantId: true, teamId: true } },
  gpus: {
    orderBy: { index: 'asc' },
    include: {
      instances: { orderBy: { start: 'asc' } },
      allocations: {
        where: ACTIVE,
        select: { jobId: true, tenantId: true, migStart: true, milli: true, gpuUnits: true, cpuMilli: true, memoryMiB: true },
      },
    },
  },
} satisfies Prisma.NodeInclude;

/** Nodes per statement of a read of every node (ClusterRepository.allNodes). */
const ALL_NODES_PAGE = 500;

export type NodeRow = Prisma.NodeGetPayload<{ include: typeof nodeWithGpus }>;

/** A node as the API shows it: the snapshot's rows and the last heartbeat. */
export const nodeForApi = { ...nodeWithGpus, heartbeat: { select: { at: true } } } satisfies Prisma.NodeInclude;

export type ApiNodeRow = Prisma.NodeGetPayload<{ include: typeof nodeForApi }>;

export const gpuWithUse = {
  node: { select: { name: true } },
  instances: { orderBy: { start: 'asc' } },
  allocations: { where: ACTIVE, select: { jobId: true, tenantId: true, migStart: true, milli: true, gpuUnits: true } },
} satisfies Prisma.GpuInclude;

export type GpuRow = Prisma.GpuGetPayload<{ include: typeof gpuWithUse }>;

/**
 * Cluster inventory: nodes, GPUs and MIG slices. The hardware is shared by every tenant;
 * what tenants must not see (other tenants' job ids) is filtered by the presenter.
 */
@Injectable()
export class ClusterRepository {
  constructor(private readonly prisma: PrismaService) {}

  listNodes(q: PageQuery, filter: { leaf?: string; state?: string; gpuModel?: string }) {
    const a = pageArgs(q);
    const where: Prisma.NodeWhereInput = {
      ...a.where,
      ...(filter.leaf ? { leaf: { name: filter.leaf } } : {}),
      ...(filter.state ? { state: filter.state as Prisma.NodeWhereInput['state'] } : {}),
      ...(filter.gpuModel ? { gpus: { some: { model: filter.gpuModel } } } : {}),
    };
    return this.prisma.client.node.findMany({ ...a, where, include: nodeForApi });
  }

  findNode(idOrName: string) {
    return this.prisma.client.node.findFirst({ where: { OR: [{ id: idOrName }, { name: idOrName }] }, include: nodeForApi });
  }

  listGpus(q: PageQuery, filter: { nodeId?: string; model?: string; health?: string }) {
    const a = pageArgs(q);
    const where: Prisma.GpuWhereInput = {
      ...a.where,
      ...(filter.nodeId ? { nodeId: filter.nodeId } : {}),
      ...(filter.model ? { model: filter.model } : {}),
      ...(filter.health ? { health: filter.health as Prisma.GpuWhereInput['health'] } : {}),
    };
    return this.prisma.client.gpu.findMany({ ...a, where, include: gpuWithUse });
  }

  /** Every node (by name) with its GPUs, slices and active allocations, read a page of nodes at a time: the scheduler's snapshot source and the topology view. */
  async allNodes(): Promise<NodeRow[]> {
    // In pages of nodes (by name): at 10,000 nodes one read of every row is parsed and nested in
    // one stretch of the worker's event loop (about 2 s measured under load), which a cycle would
    // wait behind; a page is a few tens of milliseconds. Callers that need a consistent picture
    // read the change log's mark first (IncrementalSnapshot): a node changed meanwhile is named by it.
    const ids = (await this.prisma.sql.query<{ id: string }>(`SELECT id FROM "Node" ORDER BY name`)).map((r) => r.id);
    const rows: NodeRow[] = [];
    for (let i = 0; i < ids.length; i += ALL_NODES_PAGE) for (const r of await this.readNodeRows(ids.slice(i, i + ALL_NODES_PAGE))) rows.push(r);
    return rows;
  }

  /** The nodes `ids` with their GPUs, slices and active allocations (those of them that still exist). */
  nodesByIds(ids: string[]): Promise<NodeRow[]> {
    return this.readNodeRows(ids);
  }

  /**
   * The snapshot's rows in four statements of typed SQL (nodes by name, GPUs, MIG slices, active
   * allocations), for every node (`ids` undefined) or the nodes `ids` (one array parameter, so any
   * number of nodes fits in one statement, far from Postgres's 65,535 bind parameters), nested by
   * `assembleNodeRows`. Replaces Prisma's nested include on this path: at 10,000 nodes its result
   * nesting and per-row objects cost seconds of the worker's CPU.
   */
  private async readNodeRows(ids?: readonly string[]): Promise<NodeRow[]> {
    const sql = this.prisma.sql;
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
      sql.query<FlatNodeRows['gpus'][number]>(`SELECT g.* FROM "Gpu" g WHERE true ${onNodes('g."nodeId"')} ORDER BY g."nodeId", g.index`, values),
      sql.query<FlatNodeRows['instances'][number]>(
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

  /**
   * The mark of the cluster change log now: the xmin of this statement's snapshot. Every
   * transaction below it has ended, so whatever it wrote is visible from here on; a transaction
   * still open has an id at or above it and its change rows are found by `changesSince(mark)`.
   */
  async changeMark(): Promise<bigint> {
    const [row] = await this.prisma.client.$queryRaw<{ mark: bigint }[]>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS mark`;
    return BigInt(row!.mark);
  }

  /** The nodes the change log names since `mark`, and the mark to read from next time (one statement: one snapshot). */
  async changesSince(mark: bigint): Promise<{ nodeIds: string[]; mark: bigint }> {
    const rows = await this.prisma.client.$queryRaw<{ nodeId: string | null; mark: bigint }[]>`
      WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS mark)
      SELECT c."nodeId", s.mark FROM s LEFT JOIN (SELECT DISTINCT "nodeId" FROM "ClusterChange" WHERE xid >= ${mark}) c ON true`;
    return { nodeIds: rows.flatMap((r) => (r.nodeId ? [r.nodeId] : [])), mark: BigInt(rows[0]!.mark) };
  }

  /** Drops the change rows of transactions below `mark` (every reader has read past them). */
  async pruneChanges(mark: bigint): Promise<number> {
    return this.prisma.client.$executeRaw`DELETE FROM "ClusterChange" WHERE xid < ${mark}`;
  }

  /** GPUs the cluster has in all, of `gpuModel` when given. */
  gpuCount(gpuModel: string | undefined): Promise<number> {
    return this.prisma.client.gpu.count({ where: gpuModel ? { model: gpuModel } : {} });
  }

  /** For each GPU model, the most GPUs of that model on one node (aggregated in SQL: one row per model, not per node). */
  async maxGpusPerNodeByModel(): Promise<Map<string, number>> {
    const rows = await this.prisma.sql.query<{ model: string; n: number }>(
      `SELECT model, max(c)::int AS n FROM (SELECT "nodeId", model, count(*) AS c FROM "Gpu" GROUP BY 1, 2) per_node GROUP BY model`,
    );
    return new Map(rows.map((r) => [r.model, r.n]));
  }

  /** Per GPU model: GPUs, unhealthy GPUs and allocated GPU units. */
  /** GPUs per model: all, not healthy, and the GPU units allocated now (one typed-SQL statement). */
  async capacityByModel(): Promise<{ gpuModel: string; total: number; unhealthy: number; allocated: number }[]> {
    // the console's Overview asks every few seconds; at 80,000 GPUs three Prisma group-bys were
    // three round trips and three compilations; on the reads' own connections, not behind submissions
    const rows = await this.prisma.reads.sql.query<{ gpuModel: string; total: number; unhealthy: number; allocated: number }>(
      `SELECT g.model AS "gpuModel", g.total, g.unhealthy, COALESCE(a.units, 0)::float8 AS allocated
         FROM (SELECT model, count(*)::int AS total, (count(*) FILTER (WHERE health <> 'healthy'))::int AS unhealthy
                 FROM "Gpu" GROUP BY model) g
         LEFT JOIN (SELECT "gpuModel", sum("gpuUnits") AS units FROM "Allocation" WHERE "endedAt" IS NULL GROUP BY "gpuModel") a
           ON a."gpuModel" = g.model`,
    );
    return rows.sort((a, b) => a.gpuModel.localeCompare(b.gpuModel));
  }

  /**
   * Loads the driver's inventory. Idempotent: hardware that is already known is kept as it
   * is (its state is Postgres's business), new spines, leaves, nodes and GPUs are added.
   */
  async syncInventory(inv: Inventory): Promise<{ nodesAdded: number; gpusAdded: number }> {
    const db = this.prisma.client;
    const spineNames = [...new Set(inv.nodes.map((n) => n.spine))];
    await db.spine.createMany({ data: spineNames.map((name) => ({ name })), skipDuplicates: true });
    const spines = new Map((await db.spine.findMany({ where: { name: { in: spineNames } } })).map((s) => [s.name, s.id]));
    const leafNames = new Map(inv.nodes.map((n) => [n.leaf, n.spine]));
    await db.leaf.createMany({
      data: [...leafNames].map(([name, spine]) => ({ name, spineId: spines.get(spine)! })),
      skipDuplicates: true,
    });
    const leaves = new Map((await db.leaf.findMany({ where: { name: { in: [...leafNames.keys()] } } })).map((l) => [l.name, l.id]));
    const known = new Set((await db.node.findMany({ select: { name: true } })).map((n) => n.name));
    const fresh = inv.nodes.filter((n) => !known.has(n.name));
    let gpusAdded = 0;
    let nodesAdded = 0;
    for (const candidates of chunks(fresh, 100)) {
      await db.$transaction(
        async (tx) => {
          // Several workers boot at once: one adds a node and its GPUs, the others skip it.
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('inventory-sync'))`;
          const present = new Set(
            (await tx.node.findMany({ where: { name: { in: candidates.map((n) => n.name) } }, select: { name: true } })).map((n) => n.name),
          );
          const chunk = candidates.filter((n) => !present.has(n.name));
          if (!chunk.length) return;
          nodesAdded += chunk.length;
          await tx.node.createMany({
            data: chunk.map((n) => ({
              name: n.name,
              leafId: leaves.get(n.leaf)!,
              persona: n.persona === 'vm-passthrough' ? 'vm_passthrough' : n.persona,
              cpuMilli: n.cpuMilli,
              memoryMiB: n.memoryMiB,
              labels: n.labels,
            })),
            skipDuplicates: true,
          });
          const ids = new Map(
            (await tx.node.findMany({ where: { name: { in: chunk.map((n) => n.name) } }, select: { id: true, name: true } })).map((n) => [n.name, n.id]),
          );
          // one INSERT for the chunk's GPUs (a 1,000-node cluster is 8,000 rows), one for their MIG instances
          const created = await tx.gpu.createMany({
            data: chunk.flatMap((n) =>
              n.gpus.map((g) => ({
                nodeId: ids.get(n.name)!,
                index: g.index,
                model: g.model,
                memoryMiB: g.memoryMiB,
                nvlinkDomain: g.nvlinkDomain,
                migCapable: g.migCapable,
                mode: g.migLayout.length ? ('mig' as const) : ('whole' as const),
              })),
            ),
          });
          gpusAdded += created.count;
          const partitioned = chunk.flatMap((n) => n.gpus.filter((g) => g.migLayout.length).map((g) => ({ nodeId: ids.get(n.name)!, g })));
          if (partitioned.length) {
            const rows = await tx.gpu.findMany({
              where: { nodeId: { in: [...new Set(partitioned.map((p) => p.nodeId))] } },
              select: { id: true, nodeId: true, index: true },
            });
            const gpuId = new Map(rows.map((r) => [`${r.nodeId}/${r.index}`, r.id]));
            await tx.gpuInstance.createMany({
              data: partitioned.flatMap(({ nodeId, g }) =>
                g.migLayout.map((s) => ({
                  gpuId: gpuId.get(`${nodeId}/${g.index}`)!,
                  profile: s.profile,
                  start: s.start,
                  size: sliceSize(g.model, s.profile),
                })),
              ),
            });
          }
        },
        { timeout: 60_000 },
      );
    }
    return { nodesAdded, gpusAdded };
  }
}

function chunks<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** Memory slots of a MIG profile on a GPU model (NVIDIA's geometry, owned by the scheduler). */
function sliceSize(model: string, profile: string): number {
  const p = migProfile(model, profile);
  if (!p) throw new Error(`inventory: MIG profile ${profile} does not exist on ${model}`);
  return p.size;
}
