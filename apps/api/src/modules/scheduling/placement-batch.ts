import { activeSlotKey } from '../allocations/active-slot';
import type { NewAllocation } from '../allocations/gpu-slots';
import type { QuotaGuard } from '../quotas/quota-guard';

/** One placement of a cycle, as the batched commit takes it. */
export interface Placement {
  job: { id: string; tenantId: string; teamId: string; version: number };
  allocs: NewAllocation[];
  summary: string;
  guard?: QuotaGuard;
}

/** What the batched commit read under its locks (quota locks, then job rows, then GPU rows in id order). */
export interface LockedState {
  /** Version of each placed job that is still pending. */
  pendingVersions: Map<string, number>;
  gpus: Map<string, { mode: string; schedulable: boolean; nodeReady: boolean }>;
  /** MIG slices of the GPUs, `<gpuId>:<profile>@<start>`. */
  slices: Set<string>;
  /** Active slots held now (`activeSlotKey`). */
  slots: Set<string>;
  /** Active allocations per GPU (whole, slice or share) and the thousandths its shares hold. */
  busy: Map<string, number>;
  sharedMilli: Map<string, number>;
  /** GPU units held per team and GPU model, and per tenant. */
  teamHeld: Map<string, Map<string, number>>;
  tenantHeld: Map<string, number>;
}

export interface BatchOutcome {
  /** Indexes of the placements that commit, in the order given. */
  accepted: number[];
  /** Idle whole GPUs the accepted shares turn into shared ones. */
  makeShared: string[];
}

/**
 * The re-checks of `takeGpuSlots` and `withinQuota`, for every placement of a cycle at once,
 * in the order the engine placed them: a placement that passes counts against the next ones
 * (its slots are taken, its units held), one that fails is dropped alone. Pure: the caller has
 * read `state` under the locks and writes what is accepted in the same transaction.
 */
export function checkPlacements(placements: readonly Placement[], state: LockedState): BatchOutcome {
  const slots = new Set(state.slots);
  const busy = new Map(state.busy);
  const sharedMilli = new Map(state.sharedMilli);
  const mode = new Map([...state.gpus].map(([id, g]) => [id, g.mode]));
  const teamHeld = new Map([...state.teamHeld].map(([t, m]) => [t, new Map(m)]));
  const tenantHeld = new Map(state.tenantHeld);
  const accepted: number[] = [];
  const makeShared = new Set<string>();
  placements.forEach((p, i) => {
    if (state.pendingVersions.get(p.job.id) !== p.job.version) return;
    if (p.guard && !quotaAllows(p, teamHeld.get(p.job.teamId), tenantHeld.get(p.job.tenantId) ?? 0)) return;
    const taking = new Set<string>();
    const shareAdd = new Map<string, number>();
    const turning = new Set<string>();
    for (const a of p.allocs) {
      const g = state.gpus.get(a.gpuId);
      if (!g || !g.schedulable || !g.nodeReady) return;
      const m = turning.has(a.gpuId) ? 'shared' : mode.get(a.gpuId);
      if (a.migProfile) {
        if (m !== 'mig' || !state.slices.has(`${a.gpuId}:${a.migProfile}@${a.migStart}`)) return;
      } else if (a.milli >= 1000) {
        if (m !== 'whole') return;
      } else {
        if (a.makeShared && m === 'whole') {
          if ((busy.get(a.gpuId) ?? 0) > 0) return;
          turning.add(a.gpuId);
        } else if (m !== 'shared') return;
        const milli = (sharedMilli.get(a.gpuId) ?? 0) + (shareAdd.get(a.gpuId) ?? 0) + a.milli;
        if (milli > 1000) return;
        shareAdd.set(a.gpuId, (shareAdd.get(a.gpuId) ?? 0) + a.milli);
      }
      const slot = activeSlotKey(a);
      if (slot && (slots.has(slot) || taking.has(slot))) return;
      if (slot) taking.add(slot);
    }
    // Passed: what it takes counts against the placements after it.
    accepted.push(i);
    for (const s of taking) slots.add(s);
    for (const g of turning) {
      mode.set(g, 'shared');
      makeShared.add(g);
    }
    for (const [g, milli] of shareAdd) sharedMilli.set(g, (sharedMilli.get(g) ?? 0) + milli);
    const held = teamHeld.get(p.job.teamId) ?? new Map<string, number>();
    for (const a of p.allocs) {
      busy.set(a.gpuId, (busy.get(a.gpuId) ?? 0) + 1);
      held.set(a.gpuModel, (held.get(a.gpuModel) ?? 0) + a.gpuUnits);
      tenantHeld.set(p.job.tenantId, (tenantHeld.get(p.job.tenantId) ?? 0) + a.gpuUnits);
    }
    teamHeld.set(p.job.teamId, held);
  });
  return { accepted, makeShared: [...makeShared] };
}

/** withinQuota's rule: every covering limit and the tenant total hold with this placement added. */
function quotaAllows(p: Placement, held: Map<string, number> | undefined, tenantHeld: number): boolean {
  const guard = p.guard!;
  if (!guard.limits.length) return false;
  const adding = new Map<string, number>();
  for (const a of p.allocs) adding.set(a.gpuModel, (adding.get(a.gpuModel) ?? 0) + a.gpuUnits);
  const sum = (m: Map<string, number> | undefined, model: string) =>
    !m ? 0 : model === '*' ? [...m.values()].reduce((s, n) => s + n, 0) : (m.get(model) ?? 0);
  for (const l of guard.limits) {
    const add = sum(adding, l.gpuModel);
    if (add > 0 && sum(held, l.gpuModel) + add > l.limit + 1e-6) return false;
  }
  return guard.tenantTotal === null || tenantHeld + sum(adding, '*') <= guard.tenantTotal + 1e-6;
}
