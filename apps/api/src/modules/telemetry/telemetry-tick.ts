/**
 * One telemetry tick as a pure function: the driver's per-GPU samples, the inventory and the
 * allocations that overlapped the tick's window become rollup deltas (capacity, allocated,
 * busy, memory and energy GPU-seconds per node, model and holder) and each GPU's latest state
 * (with `idleSince` for GPUs allocated but idle). No clock, no I/O.
 */

export interface TickGpu {
  id: string;
  nodeId: string;
  nodeName: string;
  index: number;
  model: string;
}

export interface TickSample {
  nodeName: string;
  gpuIndex: number;
  smPct: number;
  memoryUsedMiB: number;
  powerW: number;
}

export interface TickAllocation {
  gpuId: string;
  nodeId: string;
  gpuModel: string;
  tenantId: string;
  teamId: string;
  gpuUnits: number;
  startedAt: Date;
  endedAt: Date | null;
}

export interface RollupDelta {
  nodeId: string;
  gpuModel: string;
  /** '' for the unallocated part. */
  tenantId: string;
  teamId: string;
  capacitySeconds: number;
  allocatedSeconds: number;
  busySeconds: number;
  memoryMiBSeconds: number;
  energyJoules: number;
  /** GPU-seconds held while the GPU was idle (isIdleAllocated): allocated but idle. */
  idleSeconds: number;
}

/**
 * The idle rule the Overview, the idle list and the Utilization page share: a GPU is allocated
 * but idle while someone holds part of it and its SM use is under the threshold (GANTRY_IDLE_SM_PCT).
 */
export function isIdleAllocated(heldUnits: number, smPct: number, idleSmPct: number): boolean {
  return heldUnits > 0 && smPct < idleSmPct;
}

/** A rollup row: the sums of one bucket of `stepSeconds` (60, 3600 or 86400). */
export interface RollupRow extends RollupDelta {
  stepSeconds: number;
  bucket: Date;
}

export interface LatestGpuState {
  gpuId: string;
  nodeId: string;
  smPct: number;
  memoryUsedMiB: number;
  powerW: number;
  idleSince: Date | null;
}

export interface TickInput {
  /** End of the window (the tick's time). */
  at: Date;
  /** Window length in seconds: the window is (at - windowSeconds, at]. */
  windowSeconds: number;
  gpus: readonly TickGpu[];
  samples: readonly TickSample[];
  allocations: readonly TickAllocation[];
  /** idleSince of the previous tick, by GPU id. */
  previousIdleSince: ReadonlyMap<string, Date | null>;
  idleSmPct: number;
}

export interface TickOutput {
  deltas: RollupDelta[];
  latest: LatestGpuState[];
}

const UNALLOCATED = '';

export function computeTick(input: TickInput): TickOutput {
  const { at, windowSeconds: dt } = input;
  const windowStart = at.getTime() - dt * 1000;
  // Every delta in the order it was first touched; the unallocated ones by node and model (one
  // per GPU's node: no key string per GPU at 80,000 GPUs), the holders' by a composite key.
  const deltas: RollupDelta[] = [];
  const held = new Map<string, RollupDelta>();
  const unallocated = new Map<string, Map<string, RollupDelta>>();
  const newDelta = (nodeId: string, gpuModel: string, tenantId: string, teamId: string): RollupDelta => {
    const d = emptyDelta(nodeId, gpuModel, tenantId, teamId);
    deltas.push(d);
    return d;
  };
  const freeDelta = (nodeId: string, gpuModel: string): RollupDelta => {
    let byModel = unallocated.get(nodeId);
    if (!byModel) unallocated.set(nodeId, (byModel = new Map()));
    let d = byModel.get(gpuModel);
    if (!d) byModel.set(gpuModel, (d = newDelta(nodeId, gpuModel, UNALLOCATED, UNALLOCATED)));
    return d;
  };
  const delta = (nodeId: string, gpuModel: string, tenantId: string, teamId: string): RollupDelta => {
    if (tenantId === UNALLOCATED && teamId === UNALLOCATED) return freeDelta(nodeId, gpuModel);
    const key = `${nodeId}\u0000${gpuModel}\u0000${tenantId}\u0000${teamId}`;
    let d = held.get(key);
    if (!d) held.set(key, (d = newDelta(nodeId, gpuModel, tenantId, teamId)));
    return d;
  };

  // Capacity: every GPU of the inventory, for the whole window; the GPUs by node name and index.
  const byNode = new Map<string, { g: TickGpu; free: RollupDelta }[]>();
  for (const g of input.gpus) {
    const free = freeDelta(g.nodeId, g.model);
    free.capacitySeconds += dt;
    let onNode = byNode.get(g.nodeName);
    if (!onNode) byNode.set(g.nodeName, (onNode = []));
    onNode[g.index] = { g, free };
  }

  // Allocation-based GPU-seconds: each allocation's overlap with the window, in quota units.
  const activeAt = new Map<string, TickAllocation[]>();
  for (const a of input.allocations) {
    const start = Math.max(windowStart, a.startedAt.getTime());
    const end = Math.min(at.getTime(), a.endedAt?.getTime() ?? Infinity);
    if (end > start) delta(a.nodeId, a.gpuModel, a.tenantId, a.teamId).allocatedSeconds += (a.gpuUnits * (end - start)) / 1000;
    if (a.startedAt.getTime() <= at.getTime() && (a.endedAt === null || a.endedAt.getTime() > at.getTime())) {
      const list = activeAt.get(a.gpuId) ?? [];
      list.push(a);
      activeAt.set(a.gpuId, list);
    }
  }

  // Measured: each GPU's sample over the window, apportioned to the holders at the tick.
  const latest: LatestGpuState[] = [];
  for (const s of input.samples) {
    const known = byNode.get(s.nodeName)?.[s.gpuIndex];
    if (!known) continue;
    const g = known.g;
    const holders = activeAt.get(g.id);
    let total = 0;
    if (holders) for (const a of holders) total += a.gpuUnits;
    const heldUnits = Math.min(1, total);
    const idle = isIdleAllocated(heldUnits, s.smPct, input.idleSmPct);
    const busy = (s.smPct / 100) * dt;
    const mem = s.memoryUsedMiB * dt;
    const energy = s.powerW * dt;
    // A holder that arrived during the window is charged only for the part it held.
    let busyLeft = busy;
    let memLeft = mem;
    let energyLeft = energy;
    if (holders && heldUnits > 0) {
      for (const a of holders) {
        const heldPart = Math.min(1, (at.getTime() - Math.max(windowStart, a.startedAt.getTime())) / (dt * 1000));
        const share = (a.gpuUnits / total) * heldPart;
        const d = delta(g.nodeId, g.model, a.tenantId, a.teamId);
        d.busySeconds += busy * share;
        d.memoryMiBSeconds += mem * share;
        d.energyJoules += energy * heldUnits * share;
        // held units x the part of the window it held them, while the GPU idled
        if (idle) d.idleSeconds += a.gpuUnits * dt * heldPart;
        busyLeft -= busy * share;
        memLeft -= mem * share;
        energyLeft -= energy * heldUnits * share;
      }
    }
    const free = known.free;
    free.busySeconds += Math.max(0, busyLeft);
    free.memoryMiBSeconds += Math.max(0, memLeft);
    free.energyJoules += Math.max(0, energyLeft);

    latest.push({
      gpuId: g.id,
      nodeId: g.nodeId,
      smPct: s.smPct,
      memoryUsedMiB: s.memoryUsedMiB,
      powerW: s.powerW,
      idleSince: idle ? (input.previousIdleSince.get(g.id) ?? at) : null,
    });
  }
  return { deltas, latest };
}

/** Node id of the rows that sum every node (team, tenant and model reports read only those). */
export const ALL_NODES = '';

/** The per-node deltas plus their sums over every node (nodeId ''), per model and holder. */
export function withClusterRows(deltas: readonly RollupDelta[]): RollupDelta[] {
  const sums = new Map<string, RollupDelta>();
  for (const d of deltas) {
    const key = `${d.gpuModel}\u0000${d.tenantId}\u0000${d.teamId}`;
    const s = sums.get(key) ?? emptyDelta(ALL_NODES, d.gpuModel, d.tenantId, d.teamId);
    addMeasures(s, d);
    sums.set(key, s);
  }
  return [...deltas, ...sums.values()];
}

/** A delta of one node, model and holder with every measure at 0. */
export function emptyDelta(nodeId: string, gpuModel: string, tenantId: string, teamId: string): RollupDelta {
  return { nodeId, gpuModel, tenantId, teamId, capacitySeconds: 0, allocatedSeconds: 0, busySeconds: 0, memoryMiBSeconds: 0, energyJoules: 0, idleSeconds: 0 };
}

/** Adds the measures of `d` (GPU-seconds, MiB-seconds, joules) into `into`: the one place a rollup's sums grow. */
export function addMeasures(into: RollupDelta, d: RollupDelta): void {
  into.capacitySeconds += d.capacitySeconds;
  into.allocatedSeconds += d.allocatedSeconds;
  into.busySeconds += d.busySeconds;
  into.memoryMiBSeconds += d.memoryMiBSeconds;
  into.energyJoules += d.energyJoules;
  into.idleSeconds += d.idleSeconds;
}

/** Start of the bucket of `stepSeconds` that holds `at`. */
export function bucketOf(at: Date, stepSeconds: number): Date {
  const ms = stepSeconds * 1000;
  return new Date(Math.floor(at.getTime() / ms) * ms);
}
