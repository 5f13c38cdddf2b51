/**
 * MIG planner (pure): from pending MIG demand and the current layouts, propose the fewest
 * changes that serve it.
 *   1. Use existing free slices first (no change).
 *   2. Create slices in free memory slots of GPUs already in MIG mode, never touching running
 *      (or idle) slices.
 *   3. Re-partition a whole GPU only when it is idle, preferring nodes with the fewest idle
 *      whole GPUs (fully free nodes stay whole for big jobs), and never below the whole-GPU demand.
 *   4. Return a MIG GPU to full size (MIG off) when whole-GPU demand needs it and all its slices
 *      are idle and not wanted by MIG demand.
 * Hysteresis: a GPU changed less than `holdMs` ago is left alone (time is passed in).
 */
import { MIG_MODELS, migProfile, migProfilesFor } from '@gantry/contracts';
import { migFreeStarts, migCreationOrder, partitionsByMode, type MigLayoutEntry } from './mig-geometry';
import type { ClusterSnapshot, GpuState, NodeState } from './types';

export interface MigDemand {
  profile: string;
  count: number;
  gpuModels?: string[];
}

export interface WholeDemand {
  count: number;
  gpuModels?: string[];
}

export interface MigPlanInput {
  snapshot: ClusterSnapshot;
  migDemand: MigDemand[];
  wholeDemand?: WholeDemand[];
  /** When each GPU's MIG layout last changed (ms), for hysteresis. */
  lastChangedAtMs?: Record<string, number> | ReadonlyMap<string, number>;
  /** Whether the hold applies to a GPU that runs nothing (default true; the node manager re-partitions an idle GPU at once). */
  holdIdle?: boolean;
  nowMs?: number;
  /** Leave a GPU alone for this long after a change (default 10 minutes). */
  holdMs?: number;
}

export type MigChangeAction = 'create' | 'partition' | 'disable';

export interface MigChange {
  nodeId: string;
  gpuId: string;
  model: string;
  action: MigChangeAction;
  /** The GPU's whole layout after the change, in NVIDIA creation order (largest first). */
  layout: MigLayoutEntry[];
  /** The instances this change creates. */
  created: MigLayoutEntry[];
}

export interface MigPlan {
  changes: MigChange[];
  /** Demand the plan cannot serve, with a readable reason. */
  unmet: (MigDemand & { reason: string })[];
}

/** The GPU holds work: a whole-GPU job, a share or a busy slice. */
const runsWork = (g: GpuState) => g.allocated || g.sharedMilliUsed > 0 || g.mig.some((s) => s.busy);

const allowed = (models: string[] | undefined, m: string) => !models?.length || models.includes(m);

/** Memory slots of a profile on a model, 0 when the model has no such profile (the catalog is fixed: remembered). */
const sizes = new Map<string, Map<string, number>>();
function sizeOf(model: string, profile: string): number {
  let byProfile = sizes.get(model);
  if (!byProfile) sizes.set(model, (byProfile = new Map()));
  let size = byProfile.get(profile);
  if (size === undefined) byProfile.set(profile, (size = migProfile(model, profile)?.size ?? 0));
  return size;
}

/** Among legal free starts, the one that leaves the most room for every profile afterwards. */
function bestStart(model: string, layout: MigLayoutEntry[], profile: string): number | undefined {
  const starts = migFreeStarts(model, layout, profile);
  let best: number | undefined;
  let bestRoom = -1;
  for (const s of starts) {
    const next = [...layout, { profile, start: s }];
    let room = 0;
    for (const p of migProfilesFor(model)) room += migFreeStarts(model, next, p.name).length * p.size;
    if (room > bestRoom) {
      bestRoom = room;
      best = s;
    }
  }
  return best;
}

/** A node's idle whole GPUs usable now, and how many of them are still unchanged by the plan. */
interface IdleOnNode {
  n: NodeState;
  gpus: GpuState[];
  idle: number;
}

/** The nodes ordered by id, each one's idle GPUs by highest index first: 10,000 nodes sorted, not 50,000 idle GPUs. */
function byNodeThenIndex(nodes: IdleOnNode[]): IdleOnNode[] {
  const sorted = [...nodes].sort((a, b) => (a.n.id < b.n.id ? -1 : a.n.id > b.n.id ? 1 : 0));
  for (const x of sorted) x.gpus.sort((a, b) => b.index - a.index);
  return sorted;
}

export function planMigLayouts(input: MigPlanInput): MigPlan {
  const hold = input.holdMs ?? 10 * 60 * 1000;
  // (a Map: asked for every GPU per demand, and a record of 80,000 GPU ids is a slow dictionary)
  const given = input.lastChangedAtMs;
  const changedAt: ReadonlyMap<string, number> = given instanceof Map ? given : new Map(Object.entries(given ?? {}));
  const holdIdle = input.holdIdle ?? true;
  const held = (g: GpuState) => {
    const t = changedAt.get(g.id);
    return t !== undefined && input.nowMs !== undefined && input.nowMs - t < hold && (holdIdle || runsWork(g));
  };
  const usable = (n: NodeState, g: GpuState) => n.schedulable && g.healthy && g.schedulable && !held(g);
  // The GPUs each step looks at, from one pass over the cluster (80,000 GPUs at 10,000 nodes: no
  // list of every GPU): MIG GPUs in placement, in snapshot order; idle whole GPUs usable now, per
  // node, and counted per model (only step 3 changes them, and it keeps the counts).
  const migGpus: { n: NodeState; g: GpuState }[] = [];
  const idleNodes: IdleOnNode[] = [];
  const idleWholeLeft = new Map<string, number>();
  for (const n of input.snapshot.nodes) {
    let idle: IdleOnNode | undefined;
    for (const g of n.gpus) {
      if (g.mode === 'mig') {
        if (n.schedulable && g.healthy && g.schedulable) migGpus.push({ n, g });
      } else if (g.mode === 'whole' && !g.allocated && usable(n, g)) {
        if (!idle) idleNodes.push((idle = { n, gpus: [], idle: 0 }));
        idle.gpus.push(g);
        idle.idle++;
        idleWholeLeft.set(g.model, (idleWholeLeft.get(g.model) ?? 0) + 1);
      }
    }
  }

  // remaining demand, largest profiles first
  const demand = input.migDemand.filter((d) => d.count > 0).map((d) => ({ ...d, left: d.count }));
  demand.sort(
    (a, b) =>
      Math.max(...(b.gpuModels?.map((m) => sizeOf(m, b.profile)) ?? [maxSize(b.profile)])) -
        Math.max(...(a.gpuModels?.map((m) => sizeOf(m, a.profile)) ?? [maxSize(a.profile)])) || (a.profile < b.profile ? -1 : 1),
  );

  // 1. existing free slices; prefer GPUs that already run something (keeps idle MIG GPUs free to give back)
  const reservedGpu = new Set<string>();
  const busyFirst = [...migGpus].sort((a, b) => b.g.mig.filter((s) => s.busy).length - a.g.mig.filter((s) => s.busy).length);
  for (const d of demand) {
    for (const { g } of busyFirst) {
      if (d.left <= 0) break;
      if (!allowed(d.gpuModels, g.model)) continue;
      for (const s of g.mig) {
        if (d.left > 0 && !s.busy && s.profile === d.profile) {
          d.left--;
          reservedGpu.add(g.id);
        }
      }
    }
  }

  const changes = new Map<string, MigChange>();
  const layoutOf = (g: GpuState): MigLayoutEntry[] => changes.get(g.id)?.layout ?? g.mig.map((s) => ({ profile: s.profile, start: s.start }));

  // 2. create slices in free slots of MIG GPUs (most occupied first)
  const occupied = (g: GpuState) => layoutOf(g).reduce((a, e) => a + sizeOf(g.model, e.profile), 0);
  for (const d of demand) {
    if (d.left <= 0) continue;
    const cands = migGpus.filter(({ g }) => !held(g) && allowed(d.gpuModels, g.model) && sizeOf(g.model, d.profile) > 0);
    // (occupancy read once per candidate, not per comparison)
    const occupancy = new Map(cands.map(({ g }) => [g.id, occupied(g)]));
    cands.sort((a, b) => occupancy.get(b.g.id)! - occupancy.get(a.g.id)! || (a.g.id < b.g.id ? -1 : 1));
    for (const { n, g } of cands) {
      while (d.left > 0) {
        const layout = layoutOf(g);
        const start = bestStart(g.model, layout, d.profile);
        if (start === undefined) break;
        const entry = { profile: d.profile, start };
        const prev = changes.get(g.id);
        changes.set(g.id, {
          nodeId: n.id,
          gpuId: g.id,
          model: g.model,
          action: 'create',
          layout: [...layout, entry],
          created: [...(prev?.created ?? []), entry],
        });
        reservedGpu.add(g.id);
        d.left--;
      }
    }
  }

  // whole GPUs that must stay whole for whole-GPU demand
  const keepWhole = new Map<string, number>();
  for (const w of input.wholeDemand ?? []) {
    const key = (w.gpuModels ?? []).join('|');
    keepWhole.set(key, (keepWhole.get(key) ?? 0) + w.count);
  }
  // (idleWholeLeft: the idle whole GPUs of each model not changed yet, kept as step 3 partitions:
  // a count per candidate would make the step quadratic in the cluster's GPUs)
  const wholeLeft = (model: string) => {
    // idle whole GPUs of this model minus demand that could only use them
    let supply = idleWholeLeft.get(model) ?? 0;
    for (const [key, count] of keepWhole) if (!key || key.split('|').includes(model)) supply -= count;
    return supply;
  };

  // 3. partition idle whole GPUs, nodes with the fewest idle whole GPUs first (then node id, then
  // the highest GPU index). The idle GPUs are grouped by node, nodes sorted by id, once; per
  // demand the nodes (not their 50,000 idle GPUs) are bucketed by their idle count at that moment
  // (a stable counting sort: the order of sorting every candidate again), and GPUs are taken in
  // that order only until the demand is met.
  let ordered: IdleOnNode[] | undefined;
  for (const d of demand) {
    if (d.left <= 0) continue;
    ordered ??= byNodeThenIndex(idleNodes);
    const buckets: IdleOnNode[][] = [];
    for (const x of ordered) (buckets[x.idle] ??= []).push(x);
    const cands = (function* () {
      for (const bucket of buckets) for (const x of bucket ?? []) for (const g of x.gpus) yield { x, g };
    })();
    for (const { x, g } of cands) {
      const n = x.n;
      if (d.left <= 0) break;
      if (changes.has(g.id) || !allowed(d.gpuModels, g.model) || sizeOf(g.model, d.profile) === 0) continue;
      if (wholeLeft(g.model) <= 0) continue;
      const layout: MigLayoutEntry[] = [];
      if (partitionsByMode(g.model)) {
        // a mode splits the whole GPU at once: every partition of the profile, the extra ones idle
        const p = migProfile(g.model, d.profile)!;
        for (const start of p.starts) layout.push({ profile: p.name, start });
        d.left = Math.max(0, d.left - p.maxPerGpu);
      }
      // pack this demand, then any other remaining demand that fits the same GPU
      for (const dd of partitionsByMode(g.model) ? [] : [d, ...demand.filter((x) => x !== d)]) {
        if (!allowed(dd.gpuModels, g.model) || !migProfile(g.model, dd.profile)) continue;
        while (dd.left > 0) {
          const start = bestStart(g.model, layout, dd.profile);
          if (start === undefined) break;
          layout.push({ profile: dd.profile, start });
          dd.left--;
        }
      }
      if (layout.length) {
        changes.set(g.id, { nodeId: n.id, gpuId: g.id, model: g.model, action: 'partition', layout, created: [...layout] });
        x.idle--;
        idleWholeLeft.set(g.model, idleWholeLeft.get(g.model)! - 1);
      }
    }
  }

  // 4. give idle MIG GPUs back to whole-GPU demand
  for (const w of input.wholeDemand ?? []) {
    let need = w.count;
    for (const [model, left] of idleWholeLeft) if (allowed(w.gpuModels, model)) need -= left;
    if (need <= 0) continue;
    for (const { n, g } of migGpus) {
      if (need <= 0) break;
      if (held(g) || reservedGpu.has(g.id) || changes.has(g.id) || !allowed(w.gpuModels, g.model)) continue;
      if (g.mig.some((s) => s.busy)) continue;
      changes.set(g.id, { nodeId: n.id, gpuId: g.id, model: g.model, action: 'disable', layout: [], created: [] });
      need--;
    }
  }

  const unmet = demand
    .filter((d) => d.left > 0)
    .map((d) => ({
      profile: d.profile,
      count: d.left,
      gpuModels: d.gpuModels,
      reason: `${d.left} x ${d.profile}: no free MIG slots and no idle ${d.gpuModels?.join(' | ') ?? 'MIG-capable'} GPU to partition`,
    }));
  const out = [...changes.values()].map((c) => ({ ...c, layout: migCreationOrder(c.model, c.layout), created: migCreationOrder(c.model, c.created) }));
  out.sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : a.gpuId < b.gpuId ? -1 : 1));
  return { changes: out, unmet };
}

function maxSize(profile: string): number {
  let m = 0;
  for (const model of MIG_MODELS) m = Math.max(m, sizeOf(model, profile));
  return m;
}
