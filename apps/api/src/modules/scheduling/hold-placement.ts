import { runCycle, type ClusterSnapshot, type CycleDecision, type CycleOptions, type PendingJob } from '@gantry/scheduler';
import type { Hold } from '../reservations/reservation-holds';

/** What the cycle knows of a pending job beyond the engine's view. */
export interface HoldJobInfo {
  preemptible: boolean;
  /** When its declared work would end if started now (ms), or null when it runs until stopped. */
  endsByMs: number | null;
}

/**
 * The holds a job may not be placed on (docs/reservations.md): every open hold of another team;
 * and every hold of another team starting later, unless the job is preemptible (it is
 * checkpointed at the start) or its declared work ends by the start.
 */
export function barredHolds(job: PendingJob, info: HoldJobInfo | undefined, holds: Hold[]): Hold[] {
  return holds.filter((h) => {
    if (h.teamId === job.teamId) return false;
    if (h.active) return true;
    if (info?.preemptible) return false;
    return !(info?.endsByMs != null && info.endsByMs <= h.start);
  });
}

/**
 * Step 4-5 of the cycle with reservations: first each holder of an open window, on its held GPUs
 * only; then the jobs grouped by the holds they are barred from, group after group (the least
 * barred first), each on the snapshot with its barred GPUs and everything earlier passes took
 * out of placement. With no holds this is exactly `runCycle`.
 */
export function placeAroundHolds(
  snapshot: ClusterSnapshot,
  jobs: PendingJob[],
  holds: Hold[],
  info: Map<string, HoldJobInfo>,
  options: CycleOptions = {},
): CycleDecision {
  if (!holds.length || !jobs.length) return runCycle(snapshot, jobs, options);
  const used = new Set<string>();
  const cpu = new Map<string, number>();
  const mem = new Map<string, number>();
  const out: CycleDecision = { placed: [], pending: [] };
  // the cycle's bound on placements holds across the passes
  const left = () => Math.max(0, (options.maxPlacements ?? Infinity) - out.placed.length);
  const teamUsage = Object.fromEntries(Object.entries(options.teamUsage ?? {}).map(([k, v]) => [k, { ...v }]));
  const view = (offered: (gpuId: string) => boolean): ClusterSnapshot => ({
    nodes: snapshot.nodes.map((n) => ({
      ...n,
      cpuMilliFree: n.cpuMilliFree - (cpu.get(n.id) ?? 0),
      memoryMiBFree: n.memoryMiBFree - (mem.get(n.id) ?? 0),
      gpus: n.gpus.map((x) => (used.has(x.id) || !offered(x.id) ? { ...x, schedulable: false } : x)),
    })),
  });
  const take = (d: CycleDecision, group: PendingJob[]) => {
    const byId = new Map(group.map((j) => [j.id, j]));
    for (const p of d.placed) {
      const job = byId.get(p.jobId)!;
      out.placed.push(p);
      for (const r of p.replicas) {
        cpu.set(r.nodeId, (cpu.get(r.nodeId) ?? 0) + job.request.cpuMilli);
        mem.set(r.nodeId, (mem.get(r.nodeId) ?? 0) + job.request.memoryMiB);
        for (const x of r.gpus) used.add(x.gpuId);
      }
    }
    return new Set(d.placed.map((p) => p.jobId));
  };
  // First, the holders of open windows on their own held GPUs only (so they do not spend free
  // GPUs others could use while their reservation stands empty).
  let rest = jobs;
  const holders = [...new Set(holds.filter((h) => h.active).map((h) => h.teamId))].sort();
  for (const team of holders) {
    const own = new Set(holds.filter((h) => h.active && h.teamId === team).flatMap((h) => [...h.gpuIds]));
    const group = rest.filter((j) => j.teamId === team);
    if (!group.length) continue;
    const placed = take(
      runCycle(
        view((id) => own.has(id)),
        group,
        { ...options, teamUsage, maxPlacements: left() },
      ),
      group,
    );
    rest = rest.filter((j) => !placed.has(j.id));
  }
  const groups = new Map<string, { barred: Hold[]; jobs: PendingJob[] }>();
  for (const job of rest) {
    const barred = barredHolds(job, info.get(job.id), holds);
    const key = barred
      .map((h) => h.reservationId)
      .sort()
      .join(',');
    const g = groups.get(key) ?? { barred, jobs: [] };
    g.jobs.push(job);
    groups.set(key, g);
  }
  const order = [...groups.entries()].sort(([ka, a], [kb, b]) => a.barred.length - b.barred.length || (ka < kb ? -1 : 1));
  for (const [, g] of order) {
    const masked = new Set(g.barred.flatMap((h) => [...h.gpuIds]));
    const d = runCycle(
      view((id) => !masked.has(id)),
      g.jobs,
      { ...options, teamUsage, maxPlacements: left() },
    );
    take(d, g.jobs);
    if (d.deferred) (out.deferred ??= []).push(...d.deferred);
    for (const u of d.pending) {
      if (!g.barred.length) {
        out.pending.push(u);
        continue;
      }
      const held = g.barred.reduce((s, h) => s + h.gpuIds.size, 0);
      const names = g.barred.map((h) => `"${h.name}" (${h.active ? 'open' : `from ${new Date(h.start).toISOString()}`})`).join(', ');
      out.pending.push({
        jobId: u.jobId,
        reasons: [
          ...u.reasons,
          {
            code: 'reserved_capacity',
            message: `${held} GPU(s) are held for reservation(s) of another team: ${names}; this job may use them only if preemptible or when its declared run ends before a window starts`,
          },
        ],
      });
    }
  }
  return out;
}
