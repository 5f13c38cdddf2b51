import type { InvariantViolation } from './types';
import { groupBy, type AllocationRow, type ClusterState } from './state';

const EPS = 1e-6; // the commit guard's tolerance (withinQuota)

/**
 * Family 5, team limits: a team's active GPU units of a model stay within its row for that
 * model, and over all models within its `*` row (`limit` is the hard cap; borrowing happens
 * between guaranteed and limit, never above it).
 *
 * What the product actually guarantees, and so what is checked:
 * - The limit is enforced when work is committed (withinQuota, under the team's advisory lock).
 *   An admin may lower a limit below current use (quota-rules has no rule against it): the work
 *   keeps running and new work is held. So an excess is a violation only when an allocation the
 *   row had to admit started after the row's updatedAt; any such commit saw the current limit,
 *   and after it the sum only grows through commits that check it.
 * - A model row binds only work that names that model (quota-admission: "a job checks its
 *   model's row and the `*` row"; the commit guard passes the same rows). Work that names no
 *   model can land on that model and push its sum past the row without any commit checking it,
 *   so the trigger for a model row is an allocation of a holder that asked for that model.
 * - The tenant total (Tenant.gpuTotal) is not checked: it has no updatedAt, and lowering it
 *   below current use is allowed, so an excess cannot be told from an admin's change.
 */
export function checkQuotas(s: Pick<ClusterState, 'allocations' | 'quotas' | 'jobs' | 'replicas'>): InvariantViolation[] {
  const requestedModel = requestedModels(s);
  const byTeam = groupBy(s.allocations, (a) => a.teamId);
  const out: InvariantViolation[] = [];
  for (const q of s.quotas) {
    const all = byTeam.get(q.teamId) ?? [];
    const counted = q.gpuModel === '*' ? all : all.filter((a) => a.gpuModel === q.gpuModel);
    const used = counted.reduce((n, a) => n + a.gpuUnits, 0);
    if (used <= q.limit + EPS) continue;
    const bound = q.gpuModel === '*' ? counted : counted.filter((a) => requestedModel(a) === q.gpuModel);
    const admittedSince = bound.filter((a) => a.startedAt.getTime() > q.updatedAt.getTime());
    if (!admittedSince.length) continue; // the limit was lowered below use: allowed
    const scope = q.gpuModel === '*' ? 'GPUs (all models)' : `${q.gpuModel} GPUs`;
    out.push({
      rule: 'team-over-quota',
      subject: `team ${q.teamId}:${q.gpuModel}`,
      message: `team ${q.teamId} holds ${round(used)} ${scope}, above its limit of ${round(q.limit)}; ${admittedSince.length} allocation(s) were admitted after the limit was set (${admittedSince.map((a) => a.id).join(', ')})`,
    });
  }
  return out;
}

/** The GPU model the allocation's holder asked for (resources.gpuModel), if any. */
function requestedModels(s: Pick<ClusterState, 'jobs' | 'replicas'>): (a: AllocationRow) => string | undefined {
  const jobModel = new Map(s.jobs.map((j) => [j.id, modelOf(j.resources)]));
  const endpointModel = new Map(s.replicas.map((r) => [r.endpointId, modelOf(r.resources)]));
  return (a) => (a.jobId ? jobModel.get(a.jobId) : a.endpointId ? endpointModel.get(a.endpointId) : undefined);
}

function modelOf(resources: unknown): string | undefined {
  const m = (resources as { gpuModel?: unknown } | null)?.gpuModel;
  return typeof m === 'string' ? m : undefined;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
