/**
 * The autoscaler's maths (Knative's KPA, docs/reference/gpu.md section 5): a pure function of the
 * per-second traffic samples, the replica counts and the previous panic state. No clock, no I/O.
 */

/** Knative / KServe defaults. */
export const KNATIVE_DEFAULTS = {
  targetUtilization: 0.7,
  rpsTarget: 200,
  stableWindowSeconds: 60,
  panicWindowSeconds: 6,
  /** Panic when the panic-window demand is >= 200% of the ready capacity. */
  panicThreshold: 2,
  maxScaleUpRate: 1000,
  maxScaleDownRate: 2,
  tickSeconds: 2,
} as const;

export interface AutoscalerSettings {
  /** In-flight requests per replica (before the utilization factor). */
  targetConcurrency: number;
  minReplicas: number;
  maxReplicas: number;
  /** Idle time (no request) after which the endpoint goes to zero (minReplicas 0 only). */
  scaleToZeroAfterSeconds: number;
}

/** One second of traffic: requests that arrived in it and the average in-flight requests. */
export interface TrafficSample {
  /** Unix second. */
  t: number;
  rps: number;
  concurrency: number;
}

export interface AutoscalerInput {
  nowMs: number;
  samples: TrafficSample[];
  /** Serving replicas that answer requests now. */
  readyReplicas: number;
  /** The previous decision (serving replicas asked for). */
  currentDesired: number;
  /** When the endpoint last entered (or renewed) panic mode; null when not panicking. */
  panicSinceMs: number | null;
  /** Last request, sim traffic, creation or manual scale: the start of the idle time. */
  lastActivityMs: number;
  /** Requests the activator holds right now (waiting for a replica): the endpoint is not idle. */
  heldRequests?: number;
  /** A manual scale still in force: the autoscaler does not go below it. */
  manualFloor?: number;
}

export interface AutoscalerDecision {
  desired: number;
  panic: boolean;
  panicSinceMs: number | null;
  observedStableConcurrency: number;
  observedPanicConcurrency: number;
  observedStableRps: number;
  /** Why the count is what it is, for the console and the logs. */
  reason: string;
}

type Options = typeof KNATIVE_DEFAULTS;

/** Average per second over the last `seconds` seconds; seconds without a sample count as 0. */
export function windowAverage(samples: TrafficSample[], nowSec: number, seconds: number, field: 'rps' | 'concurrency'): number {
  let sum = 0;
  for (const s of samples) if (s.t > nowSec - seconds && s.t <= nowSec) sum += s[field];
  return sum / seconds;
}

export function decide(settings: AutoscalerSettings, input: AutoscalerInput, opts: Options = KNATIVE_DEFAULTS): AutoscalerDecision {
  const nowSec = Math.floor(input.nowMs / 1000);
  const stableConc = windowAverage(input.samples, nowSec, opts.stableWindowSeconds, 'concurrency');
  const panicConc = windowAverage(input.samples, nowSec, opts.panicWindowSeconds, 'concurrency');
  const stableRps = windowAverage(input.samples, nowSec, opts.stableWindowSeconds, 'rps');
  const panicRps = windowAverage(input.samples, nowSec, opts.panicWindowSeconds, 'rps');

  const perReplicaConc = settings.targetConcurrency * opts.targetUtilization;
  const perReplicaRps = opts.rpsTarget * opts.targetUtilization;
  // Replicas' worth of demand (fractional): the larger of the concurrency and the RPS view.
  const stableDemand = Math.max(stableConc / perReplicaConc, stableRps / perReplicaRps);
  const panicDemand = Math.max(panicConc / perReplicaConc, panicRps / perReplicaRps);

  const ready = Math.max(1, input.readyReplicas);
  const maxUp = Math.ceil(opts.maxScaleUpRate * ready);
  const maxDown = Math.floor(input.readyReplicas / opts.maxScaleDownRate);
  const clampRate = (n: number) => Math.min(maxUp, Math.max(maxDown, n));
  const desiredStable = clampRate(Math.ceil(stableDemand - 1e-9));
  const desiredPanic = clampRate(Math.ceil(panicDemand - 1e-9));

  // Panic: enter (or renew) when the short window asks for >= 2x what is ready; leave once a
  // whole stable window passed without crossing the threshold again.
  let panicSinceMs = input.panicSinceMs;
  const overThreshold = input.readyReplicas > 0 && panicDemand / input.readyReplicas >= opts.panicThreshold;
  if (overThreshold) panicSinceMs = input.nowMs;
  else if (panicSinceMs !== null && input.nowMs - panicSinceMs >= opts.stableWindowSeconds * 1000) panicSinceMs = null;
  const panic = panicSinceMs !== null;

  let desired: number;
  let reason: string;
  if (panic) {
    // Never scale down while panicking.
    desired = Math.max(desiredPanic, input.currentDesired);
    reason = `panic: ${fmt(panicConc)} in flight over ${opts.panicWindowSeconds} s (${fmt(panicDemand)} replicas' worth, ${input.readyReplicas} ready)`;
  } else if (input.readyReplicas === 0) {
    // Nothing ready yet (scale from zero): the short window sees a burst first.
    desired = Math.max(desiredStable, desiredPanic);
    reason = panicDemand > 0 ? `from zero: ${fmt(panicDemand)} replicas' worth over ${opts.panicWindowSeconds} s` : 'no traffic';
  } else {
    desired = desiredStable;
    reason = `stable: ${fmt(stableConc)} in flight, ${fmt(stableRps)} rps over ${opts.stableWindowSeconds} s`;
  }

  // Scale to zero: only after the idle time; until then the last replica stays.
  const held = input.heldRequests ?? 0;
  const idleSeconds = held > 0 ? 0 : (input.nowMs - input.lastActivityMs) / 1000;
  if (settings.minReplicas === 0 && idleSeconds >= settings.scaleToZeroAfterSeconds && !panic) {
    desired = maxDown; // rate-limited like any scale-down: 4 -> 2 -> 1 -> 0
    reason = `idle for ${Math.floor(idleSeconds)} s >= ${settings.scaleToZeroAfterSeconds} s: scaling to zero`;
  } else if (desired === 0 && input.currentDesired > 0) {
    desired = 1;
    reason = `no traffic in the window; idle ${Math.floor(idleSeconds)} s < ${settings.scaleToZeroAfterSeconds} s: keeping one replica`;
  }

  if (held > 0 && desired === 0) {
    desired = 1;
    reason = `${held} request(s) held by the activator`;
  }
  if (input.manualFloor !== undefined && desired < input.manualFloor) {
    desired = input.manualFloor;
    reason = `manual scale to ${input.manualFloor} in force`;
  }
  const bounded = Math.min(settings.maxReplicas, Math.max(settings.minReplicas, desired));
  if (bounded !== desired) reason += bounded > desired ? ` (minReplicas ${settings.minReplicas})` : ` (capped at maxReplicas ${settings.maxReplicas})`;
  return {
    desired: bounded,
    panic,
    panicSinceMs,
    observedStableConcurrency: stableConc,
    observedPanicConcurrency: panicConc,
    observedStableRps: stableRps,
    reason,
  };
}

const fmt = (n: number) => String(Math.round(n * 10) / 10);
