import { Prisma, type PrismaClient, type Tx } from '@gantry/db';
import type { AllocationRow, ClusterState, GpuRow, JobRow, NodeRow, ReplicaRow } from './state';

/**
 * Reads what the rules need with a handful of set-based queries, all inside one REPEATABLE READ
 * transaction: every query sees the same snapshot, so a check run during load never mixes a job
 * read before a commit with allocations read after it.
 */
export function loadClusterState(db: PrismaClient): Promise<ClusterState> {
  return db.$transaction((tx) => readState(tx), { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead, timeout: 120_000, maxWait: 30_000 });
}

async function readState(tx: Tx): Promise<ClusterState> {
  const allocations = await tx.$queryRaw<AllocationRow[]>`
    SELECT id, "tenantId", "teamId", "jobId", "endpointId", "bareMetalLeaseId", replica, "nodeId", "gpuId", "gpuModel", "migProfile", "migStart",
           milli, "gpuUnits"::float8 AS "gpuUnits", "activeSlot", "startedAt"
    FROM "Allocation" WHERE "endedAt" IS NULL`;
  const endedWithSlot = await tx.$queryRaw<ClusterState['endedWithSlot']>`
    SELECT id, "gpuId", "activeSlot" FROM "Allocation" WHERE "activeSlot" IS NOT NULL AND "endedAt" IS NOT NULL`;
  const gpus = await tx.$queryRaw<GpuRow[]>`
    SELECT id, "nodeId", model, mode::text AS mode, "migCapable", health::text AS health, schedulable, "migTarget", "migRequestedAt" FROM "Gpu"`;
  const instances = await tx.gpuInstance.findMany({ select: { gpuId: true, profile: true, start: true, size: true } });
  const nodes = await tx.$queryRaw<NodeRow[]>`
    SELECT id, name, state::text AS state, "transitionStartedAt", "transitionEtaAt" FROM "Node"`;
  // Unfinished jobs, plus finished ones that an active allocation names or whose fields are off:
  // never the whole history.
  const jobs = await tx.$queryRaw<JobRow[]>`
    SELECT id, "teamId", state::text AS state, replicas, resources, reasons, "startedAt", "runningSince", "finishedAt"
    FROM "Job"
    WHERE state NOT IN ('succeeded', 'failed', 'cancelled')
       OR "finishedAt" IS NULL OR "runningSince" IS NOT NULL OR jsonb_typeof(reasons) <> 'array'
       OR id IN (SELECT "jobId" FROM "Allocation" WHERE "endedAt" IS NULL AND "jobId" IS NOT NULL)`;
  const replicas = await tx.$queryRaw<ReplicaRow[]>`
    SELECT r.id, r."endpointId", r.replica, r."activeKey", r."endedAt", e.resources, e."teamId"
    FROM "EndpointReplica" r JOIN "Endpoint" e ON e.id = r."endpointId"
    WHERE r."endedAt" IS NULL OR r."activeKey" IS NOT NULL`;
  const quotas = await tx.$queryRaw<ClusterState['quotas']>`
    SELECT "teamId", "gpuModel", "limit"::float8 AS "limit", "updatedAt" FROM "Quota"`;
  const [{ n: totalJobs }] = (await tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM "Job"`) as [{ n: number }];
  return { allocations, endedWithSlot, gpus, instances, nodes, jobs, replicas, quotas, totalJobs };
}
