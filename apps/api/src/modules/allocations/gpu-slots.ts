import { Prisma, type Tx } from '@gantry/db';
import { activeSlotKey } from './active-slot';
import type { AnyTx } from '../../common/any-tx';
import { insertAll, sqlTime, type Column } from '../../common/bulk-insert';
import { newId } from '../../common/ids';

export interface NewAllocation {
  replica: number;
  nodeId: string;
  gpuId: string;
  gpuModel: string;
  migProfile?: string;
  migStart?: number;
  milli: number;
  gpuUnits: number;
  cpuMilli: number;
  memoryMiB: number;
  /** Turns an idle whole GPU into a shared one as part of this commit. */
  makeShared?: boolean;
}

/** A GPU slot or share taken meanwhile: the caller's transaction rolls back. */
export class Abort extends Error {}

/**
 * Takes the GPU slots of a placement inside the caller's transaction (jobs and endpoint
 * replicas alike): shares are checked under a row lock on the GPU, whole GPUs and MIG slices
 * by the unique active slot. Throws Abort (or a unique violation) when a slot is gone.
 */
export async function takeGpuSlots(
  tx: Tx,
  owner: { tenantId: string; teamId: string; jobId?: string; endpointId?: string },
  allocs: NewAllocation[],
): Promise<void> {
  // Every GPU of the placement, locked in id order: a MIG change or another commit on the same
  // GPU waits for this transaction, and this one sees what they committed (schedulable, mode).
  const gpuIds = [...new Set(allocs.map((a) => a.gpuId))].sort();
  const locked = await tx.$queryRaw<{ id: string; mode: string; schedulable: boolean }[]>`
    SELECT id, mode::text AS mode, schedulable FROM "Gpu" WHERE id IN (${Prisma.join(gpuIds)}) ORDER BY id FOR UPDATE`;
  const gpus = new Map(locked.map((g) => [g.id, g]));
  // The nodes too, shared: a power-down (PowerRepository.beginPowerDown) locks its node for update
  // and counts its allocations, so either this placement sees the node going down and aborts, or
  // the power-down waits for it and sees its allocations.
  const nodeIds = [...new Set(allocs.map((a) => a.nodeId))].sort();
  const nodes = await tx.$queryRaw<{ id: string; powerState: string }[]>`
    SELECT id, "powerState"::text AS "powerState" FROM "Node" WHERE id IN (${Prisma.join(nodeIds)}) ORDER BY id FOR SHARE`;
  if (nodes.length !== nodeIds.length || nodes.some((n) => n.powerState !== 'on')) throw new Abort();
  const migAllocs = allocs.filter((a) => a.migProfile);
  const slices = migAllocs.length
    ? await tx.$queryRaw<{ gpuId: string; profile: string; start: number }[]>`
        SELECT "gpuId", profile, start FROM "GpuInstance" WHERE "gpuId" IN (${Prisma.join([...new Set(migAllocs.map((a) => a.gpuId))])})`
    : [];
  for (const a of allocs) {
    const g = gpus.get(a.gpuId);
    // A GPU taken out of scheduling since the snapshot (a MIG change, a fault) or whose mode
    // changed meanwhile cannot take this slot: the driver would refuse it.
    if (!g || !g.schedulable) throw new Abort();
    if (a.migProfile) {
      if (g.mode !== 'mig' || !slices.some((s) => s.gpuId === a.gpuId && s.profile === a.migProfile && s.start === a.migStart)) throw new Abort();
    } else if (a.milli >= 1000 && g.mode !== 'whole') throw new Abort();
  }
  for (const a of allocs.filter((x) => x.milli < 1000 && !x.migProfile)) {
    // Shares: the GPU row is locked; check the sum under the lock.
    const gpu = gpus.get(a.gpuId)!;
    if (a.makeShared && gpu.mode === 'whole') {
      // The first share turns an idle whole GPU into a shared one.
      const busy = await tx.allocation.count({ where: { gpuId: a.gpuId, endedAt: null } });
      if (busy > 0) throw new Abort();
      await tx.gpu.update({ where: { id: a.gpuId }, data: { mode: 'shared', version: { increment: 1 } } });
      gpu.mode = 'shared';
    }
    // A GPU another share of this cycle made shared meanwhile takes this one too (within 1000).
    if (gpu.mode !== 'shared') throw new Abort();
    const used = await tx.allocation.aggregate({ where: { gpuId: a.gpuId, endedAt: null }, _sum: { milli: true } });
    if ((used._sum.milli ?? 0) + a.milli > 1000) throw new Abort();
  }
  await insertAllocations(
    tx,
    allocs.map((a) => allocationRow(owner, a)),
  );
}

/** An Allocation row as written: allocationRow's fields, with an id and start (given, or new and now) and an end. */
type AllocationInsert = Prisma.AllocationCreateManyInput & { id: string; startedAt: Date | string; endedAt?: Date | string | null };

/** The columns of an Allocation row (insertAll). */
export const ALLOCATION_COLUMNS: Column<AllocationInsert>[] = [
  { name: 'id', type: 'text', value: (a) => a.id },
  { name: 'tenantId', type: 'text', value: (a) => a.tenantId },
  { name: 'teamId', type: 'text', value: (a) => a.teamId },
  { name: 'jobId', type: 'text', value: (a) => a.jobId ?? null },
  { name: 'endpointId', type: 'text', value: (a) => a.endpointId ?? null },
  { name: 'bareMetalLeaseId', type: 'text', value: (a) => a.bareMetalLeaseId ?? null },
  { name: 'replica', type: 'int', value: (a) => a.replica },
  { name: 'nodeId', type: 'text', value: (a) => a.nodeId },
  { name: 'gpuId', type: 'text', value: (a) => a.gpuId },
  { name: 'gpuModel', type: 'text', value: (a) => a.gpuModel },
  { name: 'migProfile', type: 'text', value: (a) => a.migProfile ?? null },
  { name: 'migStart', type: 'int', value: (a) => a.migStart ?? null },
  { name: 'milli', type: 'int', value: (a) => a.milli ?? 1000 },
  { name: 'gpuUnits', type: 'numeric', value: (a) => String(a.gpuUnits) },
  { name: 'cpuMilli', type: 'int', value: (a) => a.cpuMilli ?? 0 },
  { name: 'memoryMiB', type: 'int', value: (a) => a.memoryMiB ?? 0 },
  { name: 'activeSlot', type: 'text', value: (a) => a.activeSlot ?? null },
  { name: 'startedAt', type: 'timestamp(3)', value: (a) => sqlTime(a.startedAt) },
  { name: 'endedAt', type: 'timestamp(3)', value: (a) => sqlTime(a.endedAt) },
];

/** Inserts the allocations a holder takes now, in one statement (typed SQL: see insertAll). */
export async function insertAllocations(tx: AnyTx, rows: readonly Prisma.AllocationCreateManyInput[]): Promise<void> {
  if (!rows.length) return;
  await insertAll(tx, 'Allocation', ALLOCATION_COLUMNS, newAllocationRows(rows));
}

/** Allocation rows as inserted: an id and a start time (now) where the row has none. */
export function newAllocationRows(rows: readonly Prisma.AllocationCreateManyInput[], now = new Date()): AllocationInsert[] {
  return rows.map((r) => ({ ...r, id: r.id ?? newId(), startedAt: r.startedAt ?? now }));
}

/** The Allocation row of one slot a holder takes (its active slot key makes the slot unique). */
export function allocationRow(
  owner: { tenantId: string; teamId: string; jobId?: string | null; endpointId?: string | null },
  a: NewAllocation,
): Prisma.AllocationCreateManyInput {
  return {
    tenantId: owner.tenantId,
    teamId: owner.teamId,
    jobId: owner.jobId ?? null,
    endpointId: owner.endpointId ?? null,
    replica: a.replica,
    nodeId: a.nodeId,
    gpuId: a.gpuId,
    gpuModel: a.gpuModel,
    migProfile: a.migProfile ?? null,
    migStart: a.migStart ?? null,
    milli: a.milli,
    gpuUnits: new Prisma.Decimal(a.gpuUnits.toFixed(4)),
    cpuMilli: a.cpuMilli,
    memoryMiB: a.memoryMiB,
    activeSlot: activeSlotKey(a),
  };
}
