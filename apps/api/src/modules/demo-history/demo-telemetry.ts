/**
 * The telemetry the demo's past would have left: once a minute (its last day; every 5 minutes
 * before), what each GPU reports under the
 * load it carried (the simulated driver's own telemetry model, gpuLoads/gpuSamples) and the
 * allocations of the window, through the live tick's arithmetic (computeTick) into the same
 * usage rollups the worker writes (minute, hour and day buckets). Pure.
 */
import { gpuLoads, gpuSamples, type GpuClaim, type SampledNode } from '@gantry/driver';
import { yieldToEventLoop } from './demo-replay';
import {
  addMeasures,
  bucketOf,
  computeTick,
  withClusterRows,
  type RollupDelta,
  type RollupRow,
  type TickAllocation,
  type TickGpu,
} from '../telemetry/telemetry-tick';

/** An allocation of the past with the claim the simulated cluster would have held for it. */
export interface PastAllocation extends TickAllocation {
  endedAt: Date;
  claim: GpuClaim;
}

export interface PastTelemetryInput {
  nodes: readonly SampledNode[];
  gpus: readonly TickGpu[];
  allocations: readonly PastAllocation[];
  /** The past: [fromMs, toMs), whole minutes. */
  fromMs: number;
  toMs: number;
  /** Minute rollups are written from here on (hour and day rollups for the whole past). */
  minuteRollupsFromMs: number;
  idleSmPct: number;
}

const MINUTE = 60;
/** Before the minute rollups, one sample per 5 minutes: the hour and day buckets sum them the same way. */
const COARSE = 300;

/**
 * End of the window that starts at `ms`: a minute where minute rollups are written; else up to
 * 5 minutes, never across an hour boundary (each window adds into one hour bucket) or into the
 * minute rollups' span.
 */
function windowEnd(ms: number, input: PastTelemetryInput): number {
  if (ms >= input.minuteRollupsFromMs) return ms + MINUTE * 1000;
  const nextHour = (Math.floor(ms / 3_600_000) + 1) * 3_600_000;
  return Math.min(ms + COARSE * 1000, nextHour, input.minuteRollupsFromMs, input.toMs);
}

/** Adds `d` into the row of its key in `rows`. */
function addInto(rows: Map<string, RollupRow>, stepSeconds: number, bucket: Date, d: RollupDelta): void {
  const key = `${bucket.getTime()}\u0000${d.nodeId}\u0000${d.gpuModel}\u0000${d.tenantId}\u0000${d.teamId}`;
  const r = rows.get(key);
  if (!r) {
    rows.set(key, { ...d, stepSeconds, bucket });
    return;
  }
  addMeasures(r, d);
}

/**
 * The rollup rows of the past, minute by minute. Rows of a bucket that the past covers only in
 * part (the last hour and day) hold only the past's part: the live ticks add the rest.
 */
export async function pastRollups(input: PastTelemetryInput): Promise<RollupRow[]> {
  const byStart = [...input.allocations].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  const minutes: RollupRow[] = [];
  const hours = new Map<string, RollupRow>();
  const days = new Map<string, RollupRow>();
  let next = 0;
  let live: PastAllocation[] = [];
  const noIdle = new Map<string, Date | null>();
  for (let windowStart = input.fromMs; windowStart < input.toMs;) {
    const atMs = windowEnd(windowStart, input);
    const windowSeconds = (atMs - windowStart) / 1000;
    while (next < byStart.length && byStart[next]!.startedAt.getTime() <= atMs) live.push(byStart[next++]!);
    live = live.filter((a) => a.endedAt.getTime() > windowStart);
    // What runs at the tick's instant is what the GPUs report (as the live tick samples the driver).
    const running = live.filter((a) => a.startedAt.getTime() <= atMs && a.endedAt.getTime() > atMs);
    const modelOf = new Map(running.map((a) => [a.claim, a.gpuModel]));
    const loads = gpuLoads([...modelOf.keys()], (c) => modelOf.get(c)!);
    const at = new Date(atMs);
    const samples = gpuSamples(input.nodes, loads, atMs);
    const { deltas } = computeTick({
      at,
      windowSeconds,
      gpus: input.gpus,
      samples,
      allocations: live,
      previousIdleSince: noIdle,
      idleSmPct: input.idleSmPct,
    });
    const bucket = new Date(windowStart);
    for (const d of withClusterRows(deltas)) {
      if (windowStart >= input.minuteRollupsFromMs) minutes.push({ ...d, stepSeconds: MINUTE, bucket });
      addInto(hours, 3600, bucketOf(bucket, 3600), d);
      addInto(days, 86400, bucketOf(bucket, 86400), d);
    }
    windowStart = atMs;
    if (windowStart % 3_600_000 === 0) await yieldToEventLoop();
  }
  return [...minutes, ...hours.values(), ...days.values()];
}
