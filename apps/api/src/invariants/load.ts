import { sqlOf, type PrismaClient, type SqlTx } from '@gantry/db';
import type { AllocationRow, ClusterState, GpuRow, JobRow, NodeRow, ReplicaRow } from './state';

/**
 * Reads what the rules need with a handful of set-based queries, all inside one REPEATABLE READ
 * transaction: every query sees the same snapshot, so a check run during load never mixes a job
 * read before a commit with allocations read after it. Typed SQL on the client's pool, not
 * Prisma's raw queries: at 10,000 nodes the check reads 80,000 GPU rows, and Prisma's mapping of
 * raw results cost the worker (and the load benchmark, which checks every 3 s) about 1 s of CPU
 * and hundreds of MB of garbage per check.
 */
export function loadClusterState(db: PrismaClient): Promise<ClusterState> {
  return sqlOf(db).transaction((tx) => readState(tx), { isolation: 'repeatable read' });
}

async function readState(tx: SqlTx): Promise<ClusterState> {
  const allocations = await tx.query<AllocationRow>(`
    SELECT id, "tenantId", "teamId", "jobId", "endpointId", "bareMetalLeaseId", replica, "nodeId", "gpuId", "gpuModel", "migProfile", "migStart",
           milli, "gpuUnits"::float8 AS "gpuUnits", "activeSlot", "startedAt"
    FROM "Allocation" WHERE "endedAt" IS NULL`);
  const endedWithSlot = await tx.query<ClusterState['endedWithSlot'][number]>(`
    SELECT id, "gpuId", "activeSlot" FROM "Allocation" WHERE "activeSlot" IS NOT NULL AND "endedAt" IS NOT NULL`);
  const gpus = await tx.query<GpuRow>(`
    SELECT id, "nodeId", model, mode::text AS mode, "migCapable", health::text AS health, schedulable, "migTarget", "migRequestedAt" FROM "Gpu"`);
  const instances = await tx.query<ClusterState['instances'][number]>(`SELECT "gpuId", profile, start, size FROM "GpuInstance"`);
  const nodes = await tx.query<NodeRow>(`
    SELECT id, name, state::text AS state, "transitionStartedAt", "transitionEtaAt" FROM "Node"`);
  // Unfinished jobs, plus finished ones that an active allocation names or whose fields are off:
  // never the whole history.
  const jobs = await tx.query<JobRow>(`
    SELECT id, "teamId", state::text AS state, replicas, resources, reasons, "startedAt", "runningSince", "finishedAt"
    FROM "Job"
    WHERE state NOT IN ('succeeded', 'failed', 'cancelled')
       OR "finishedAt" IS NULL OR "runningSince" IS NOT NULL OR jsonb_typeof(reasons) <> 'array'
       OR id IN (SELECT "jobId" FROM "Allocation" WHERE "endedAt" IS NULL AND "jobId" IS NOT NULL)`);
  const replicas = await tx.query<ReplicaRow>(`
    SELECT r.id, r."endpointId", r.replica, r."activeKey", r."endedAt", e.resources, e."teamId"
    FROM "EndpointReplica" r JOIN "Endpoint" e ON e.id = r."endpointId"
    WHERE r."endedAt" IS NULL OR r."activeKey" IS NOT NULL`);
  const quotas = await tx.query<ClusterState['quotas'][number]>(`
    SELECT "teamId", "gpuModel", "limit"::float8 AS "limit", "updatedAt" FROM "Quota"`);
  const [{ n: totalJobs }] = (await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Job"`)) as [{ n: number }];
  return { allocations, endedWithSlot, gpus, instances, nodes, jobs, replicas, quotas, totalJobs };
}
