/**
 * Preemption planning (step 5 of the cycle, "plan"), on the API side: the engine places, this
 * module chooses victims. Two kinds, as in Kueue and KAI:
 *   - reclaim: a team asking for GPUs within its guaranteed quota takes them back from teams
 *     running above theirs (borrowers);
 *   - priority: within a team, a job preempts lower-priority jobs of the same team.
 * Only preemptible jobs below `critical` are victims; they are suspended with a checkpoint and
 * requeued (never killed). Pure: placement feasibility is a function passed in.
 */

export interface RunningJob {
  id: string;
  teamId: string;
  tenantId?: string;
  /** Numeric priority (higher wins). */
  priority: number;
  /** May be preempted: `preemptible` and not critical. */
  preemptible: boolean;
  /** GPU units it holds. */
  units: number;
  startedAtMs: number;
}

export interface Preemptor {
  id: string;
  teamId: string;
  tenantId?: string;
  priority: number;
  /** The job fits its team's guaranteed quota: it may reclaim from borrowers. */
  withinGuaranteed: boolean;
  /** GPUs its own team must free to fit the team's quota (0 when it fits). */
  teamExcess: number;
  /** GPUs borrowers of its tenant must give back to fit the tenant total (0 when it fits). */
  tenantExcess?: number;
}

export interface PreemptionInput {
  job: Preemptor;
  /** Running jobs (candidates). */
  running: RunningJob[];
  /** Teams running above their guaranteed quota. */
  borrowerTeams: Set<string>;
  /** Jobs already being preempted: their GPUs are on the way back. */
  freeing: RunningJob[];
  /**
   * Jobs that held GPUs in the snapshot the what-ifs run on but hold none now (requeued or ended
   * since it was read): their GPUs are free already, the snapshot does not show it yet.
   */
  released?: readonly string[];
  /** Whether the job can be placed once these jobs' allocations are gone. */
  canPlace(without: Set<string>): boolean;
  maxVictims?: number;
}

export type PreemptionPlan =
  { kind: 'none' } | { kind: 'wait'; freeing: number } | { kind: 'preempt'; victims: { job: RunningJob; why: 'reclaim' | 'priority' }[] };

const EPS = 1e-9;
type Candidate = { job: RunningJob; why: 'reclaim' | 'priority' };

export function planPreemption(input: PreemptionInput): PreemptionPlan {
  const { job } = input;
  const tenantExcess = job.tenantExcess ?? 0;
  const sameTenant = (r: RunningJob) => job.tenantId === undefined || r.tenantId === undefined || r.tenantId === job.tenantId;
  const own = (rs: RunningJob[]) => rs.filter((r) => r.teamId === job.teamId).reduce((s, r) => s + r.units, 0);
  const tenantBorrowed = (rs: RunningJob[]) => rs.filter((r) => r.teamId !== job.teamId && sameTenant(r)).reduce((s, r) => s + r.units, 0);
  const freeingIds = [...input.freeing.map((r) => r.id), ...(input.released ?? [])];
  const ok = (chosen: Candidate[]) => {
    const all = [...input.freeing, ...chosen.map((c) => c.job)];
    if (own(all) + EPS < job.teamExcess) return false;
    if (tenantBorrowed(all) + EPS < tenantExcess) return false;
    return input.canPlace(new Set([...freeingIds, ...chosen.map((c) => c.job.id)]));
  };
  if (freeingIds.length && ok([])) return { kind: 'wait', freeing: input.freeing.length };

  const mayReclaim = job.withinGuaranteed && job.teamExcess <= EPS;
  const candidates = input.running
    .filter((r) => r.preemptible && !freeingIds.includes(r.id))
    .map((r): Candidate | null => {
      if (r.teamId === job.teamId) return r.priority < job.priority ? { job: r, why: 'priority' } : null;
      if (!mayReclaim || !input.borrowerTeams.has(r.teamId)) return null;
      // The tenant total is given back by the tenant's own borrowers.
      if (tenantExcess > EPS && !sameTenant(r)) return null;
      return { job: r, why: 'reclaim' };
    })
    .filter((c): c is Candidate => c !== null)
    // Borrowers of other teams first, then the lowest priority, then the most recently started.
    .sort(
      (a, b) =>
        (a.why === b.why ? 0 : a.why === 'reclaim' ? -1 : 1) ||
        a.job.priority - b.job.priority ||
        b.job.startedAtMs - a.job.startedAtMs ||
        (a.job.id < b.job.id ? -1 : 1),
    );
  if (!candidates.length) return { kind: 'none' };
  const max = input.maxVictims ?? 32;
  const chosen: Candidate[] = [];
  for (const c of candidates) {
    if (chosen.length >= max) return { kind: 'none' };
    chosen.push(c);
    if (ok(chosen)) {
      // Minimise: drop victims that turn out not to be needed (the newest choices first).
      for (let i = chosen.length - 2; i >= 0; i--) {
        const without = chosen.filter((_, k) => k !== i);
        if (ok(without)) chosen.splice(i, 1);
      }
      return { kind: 'preempt', victims: chosen };
    }
  }
  return { kind: 'none' };
}
