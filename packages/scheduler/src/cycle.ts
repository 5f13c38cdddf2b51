/**
 * One scheduling cycle, as a numbered pipeline over a snapshot:
 *   1. snapshot  - index a private copy (the caller's snapshot is never mutated)
 *   2. learn     - the fragmentation model learns the shape mix from history + the queue
 *   3. order     - priority, then weighted dominant-resource fair share per team, then age
 *   4. place     - the profile's plugins place each job (gangs all or nothing)
 *   5. explain   - jobs left pending carry readable, aggregated reasons
 * Pure: same snapshot, jobs and options -> same decision.
 */
import { Engine, type EngineOptions } from './engine';
import type { ClusterSnapshot, CycleDecision, CycleOptions, PendingJob, TeamUsage } from './types';
import { gpuUnits } from './plugins/reserve-permit';

export function runCycle(
  snapshot: ClusterSnapshot,
  jobs: PendingJob[],
  options: CycleOptions & Pick<EngineOptions, 'plugins' | 'profiles' | 'mix'> = {},
): CycleDecision {
  // 1. snapshot
  const engine = new Engine(snapshot, {
    profile: options.profile,
    history: options.history,
    plugins: options.plugins,
    profiles: options.profiles,
    mix: options.mix,
    frozenStates: options.frozenStates,
  });
  // 2. learn
  for (const job of jobs) engine.observe(job);
  engine.mix.refresh();
  for (const [team, u] of Object.entries(options.teamUsage ?? {})) engine.teamUsage.set(team, { ...u });
  const decision: CycleDecision = { placed: [], pending: [] };
  const max = options.maxPlacements ?? Infinity;
  // 3 + 4. order (fair share is re-read after every placement) and place
  for (const job of fairOrder(engine, snapshot, jobs, options.teamWeights ?? {})) {
    if (decision.placed.length >= max) {
      (decision.deferred ??= []).push(job.id);
      continue;
    }
    const result = engine.place(job);
    if (result.status.code === 'success') decision.placed.push({ jobId: job.id, replicas: result.replicas });
    // 5. explain
    else decision.pending.push({ jobId: job.id, reasons: result.status.reasons });
  }
  return decision;
}

/** Totals used to turn usage into shares. */
function capacity(snapshot: ClusterSnapshot): TeamUsage {
  let gpus = 0;
  let cpuMilli = 0;
  let memoryMiB = 0;
  for (const n of snapshot.nodes) {
    gpus += n.gpus.length;
    cpuMilli += n.cpuMilli;
    memoryMiB += n.memoryMiB;
  }
  return { gpus: gpus || 1, cpuMilli: cpuMilli || 1, memoryMiB: memoryMiB || 1 };
}

/** Weighted dominant-resource share of a team. */
export function dominantShare(usage: TeamUsage | undefined, total: TeamUsage, weight = 1): number {
  if (!usage) return 0;
  return Math.max(usage.gpus / total.gpus, usage.cpuMilli / total.cpuMilli, usage.memoryMiB / total.memoryMiB) / (weight > 0 ? weight : 1);
}

const byAge = (a: PendingJob, b: PendingJob) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Yields jobs by priority (higher first); within a priority, the team with the lowest weighted
 * dominant share goes next (re-read after each placement), its oldest job first; then age.
 */
export function* fairOrder(engine: Engine, snapshot: ClusterSnapshot, jobs: PendingJob[], weights: Record<string, number>): Generator<PendingJob> {
  const total = capacity(snapshot);
  const priorities = [...new Set(jobs.map((j) => j.priority))].sort((a, b) => b - a);
  for (const p of priorities) {
    const queues = new Map<string, PendingJob[]>();
    for (const j of jobs) {
      if (j.priority !== p) continue;
      let q = queues.get(j.teamId);
      if (!q) queues.set(j.teamId, (q = []));
      q.push(j);
    }
    for (const q of queues.values()) q.sort(byAge);
    const heads = new Map<string, number>([...queues.keys()].map((t) => [t, 0]));
    for (;;) {
      let pick: string | null = null;
      let pickShare = 0;
      for (const [team, q] of queues) {
        const h = heads.get(team)!;
        if (h >= q.length) continue;
        const share = dominantShare(engine.teamUsage.get(team), total, weights[team] ?? 1);
        if (pick === null || share < pickShare || (share === pickShare && byAge(q[h]!, queues.get(pick)![heads.get(pick)!]!) < 0)) {
          pick = team;
          pickShare = share;
        }
      }
      if (pick === null) break;
      const h = heads.get(pick)!;
      heads.set(pick, h + 1);
      yield queues.get(pick)![h]!;
    }
  }
}

/** The order alone (for explaining queue positions): same rule, assuming nothing gets placed. */
export function orderJobs(snapshot: ClusterSnapshot, jobs: PendingJob[], options: Pick<CycleOptions, 'teamUsage' | 'teamWeights'> = {}): PendingJob[] {
  const engine = new Engine({ nodes: [] });
  for (const [team, u] of Object.entries(options.teamUsage ?? {})) engine.teamUsage.set(team, { ...u });
  const out: PendingJob[] = [];
  for (const j of fairOrder(engine, snapshot, jobs, options.teamWeights ?? {})) {
    out.push(j);
    const v = engine.jobView(j);
    const u = engine.teamUsage.get(j.teamId) ?? { gpus: 0, cpuMilli: 0, memoryMiB: 0 };
    engine.teamUsage.set(j.teamId, {
      gpus: u.gpus + j.replicas * gpuUnits(v),
      cpuMilli: u.cpuMilli + j.replicas * v.cpu,
      memoryMiB: u.memoryMiB + j.replicas * v.mem,
    });
  }
  return out;
}
