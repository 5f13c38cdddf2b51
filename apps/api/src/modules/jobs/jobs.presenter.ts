import type { Job, JobDetail, JobResources, Placement, Reason } from '@gantry/contracts';
import type { JobRow } from './jobs.repository';

/** Per-replica resources as answered (jobs and endpoint replicas alike): only what was asked. */
export function presentResources(r: JobResources): Job['resources'] {
  return {
    ...(r.gpus !== undefined ? { gpus: r.gpus } : {}),
    ...(r.migProfile !== undefined ? { migProfile: r.migProfile } : {}),
    ...(r.gpuFraction !== undefined ? { gpuFraction: r.gpuFraction } : {}),
    ...(r.gpuModel !== undefined ? { gpuModel: r.gpuModel } : {}),
    cpuMilli: r.cpuMilli,
    memoryMiB: r.memoryMiB,
  };
}

/** Groups a job's active allocations into per-replica placements. */
export function placementOf(row: JobRow): Placement[] {
  return placementOfAllocations(row.allocations);
}

/** Groups allocations (active, or those of a job's last run) into per-replica placements. */
export function placementOfAllocations(allocations: JobRow['allocations']): Placement[] {
  const byReplica = new Map<number, Placement>();
  for (const a of allocations) {
    const p = byReplica.get(a.replica) ?? { replica: a.replica, nodeId: a.nodeId, nodeName: a.node.name, gpus: [] };
    p.gpus.push({
      gpuId: a.gpuId,
      index: a.gpu.index,
      ...(a.migProfile ? { migProfile: a.migProfile, migStart: a.migStart ?? 0 } : {}),
      ...(a.milli < 1000 && !a.migProfile ? { fraction: a.milli / 1000 } : {}),
    });
    byReplica.set(a.replica, p);
  }
  return [...byReplica.values()].sort((a, b) => a.replica - b.replica);
}

/**
 * Progress of the simulated work in [0, 1], counting the current run. A suspending job still
 * runs until its checkpoint is taken: its progress holds (it does not fall back to the stored
 * figure, which is 0 for a first run, until the checkpoint records it).
 */
export function progressOf(
  row: Pick<JobRow, 'durationSeconds' | 'state' | 'runningSince' | 'progressSeconds'>,
  now: Date,
  simSpeed: number,
): number | undefined {
  if (!row.durationSeconds) return undefined;
  if (row.state === 'succeeded') return 1;
  const runs = row.state === 'running' || row.state === 'suspending';
  const running = runs && row.runningSince ? ((now.getTime() - row.runningSince.getTime()) / 1000) * simSpeed : 0;
  return Math.min(1, Math.max(0, (row.progressSeconds + running) / row.durationSeconds));
}

export function presentJob(row: JobRow, ctx: { now: Date; simSpeed: number; queuePosition?: number; lastRun?: JobRow['allocations'] }): Job {
  const r = row.resources as JobResources;
  const progress = progressOf(row, ctx.now, ctx.simSpeed);
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    kind: row.kind,
    state: row.state,
    priority: row.priority,
    replicas: row.replicas,
    resources: presentResources(r),
    topology: { level: row.topologyLevel as Job['topology']['level'], required: row.topologyRequired },
    preemptible: row.preemptible,
    placement: placementOf(row),
    ...(ctx.lastRun?.length && !row.allocations.length ? { ranOn: placementOfAllocations(ctx.lastRun) } : {}),
    reasons: (row.reasons ?? []) as Reason[],
    ...(ctx.queuePosition !== undefined ? { queuePosition: ctx.queuePosition } : {}),
    ...(progress !== undefined ? { progress } : {}),
    ...(row.durationSeconds ? { simulation: { durationSeconds: row.durationSeconds } } : {}),
    createdAt: row.createdAt.toISOString(),
    ...(row.startedAt ? { startedAt: row.startedAt.toISOString() } : {}),
    ...(row.finishedAt ? { finishedAt: row.finishedAt.toISOString() } : {}),
  };
}

export function presentJobDetail(
  row: JobRow,
  events: { id: string; type: string; message: string; createdAt: Date }[],
  ctx: { now: Date; simSpeed: number; queuePosition?: number; lastRun?: JobRow['allocations'] },
): JobDetail {
  return {
    ...presentJob(row, ctx),
    events: events.map((e) => ({ id: e.id, type: e.type, message: e.message, createdAt: e.createdAt.toISOString() })),
  };
}
