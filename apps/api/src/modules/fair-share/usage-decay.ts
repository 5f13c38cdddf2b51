/**
 * Fair share over time (Slurm's PriorityDecayHalfLife, KAI's time-based fair share): a team's
 * past GPU usage counts with exponential decay, so a team that ran heavily yesterday yields to
 * one that did not. Pure: times are passed in.
 *
 * Units: usage in GPU-seconds of cluster time (simulated seconds; on a real cluster, seconds),
 * timestamps in wall-clock ms. `simSpeed` turns wall-clock into cluster time.
 *
 * With half-life H and k = ln 2 / H, decayed usage at time t is U(t) = sum over holdings of
 * g * integral of 2^(-(t - s) / H) ds. Rolling it forward from `asOf` is exact:
 * U(t) = U(asOf) * 2^(-(t - asOf) / H) + what the allocations held in (asOf, t], each interval
 * [a, b] of g GPUs adding g / k * (e^(-k (t - b)) - e^(-k (t - a))).
 * U * k is the team's "decayed average GPUs": a team that held G GPUs forever has U * k = G.
 */
export interface DecayParams {
  /** Half-life in cluster seconds. */
  halfLifeSeconds: number;
  /** Cluster seconds per wall-clock second (GANTRY_SIM_SPEED; 1 on a real cluster). */
  simSpeed: number;
}

/** A stretch of GPU holding: `gpus` units from `startMs` to `endMs` (null = still held). */
export interface Holding {
  teamId: string;
  gpus: number;
  startMs: number;
  endMs: number | null;
}

export interface UsageRecord {
  /** Decayed usage in GPU-seconds as of `asOfMs`. */
  gpuSeconds: number;
  asOfMs: number;
}

const rate = (p: DecayParams) => Math.LN2 / p.halfLifeSeconds;
/** Cluster seconds between two wall-clock instants. */
const clusterSeconds = (fromMs: number, toMs: number, p: DecayParams) => (Math.max(0, toMs - fromMs) / 1000) * p.simSpeed;

/** The fraction of a usage that is left after `fromMs` -> `toMs`. */
export function decayFactor(fromMs: number, toMs: number, p: DecayParams): number {
  return Math.pow(2, -clusterSeconds(fromMs, toMs, p) / p.halfLifeSeconds);
}

/** Decayed GPU-seconds a holding adds in the window (fromMs, toMs], seen at toMs. */
export function holdingContribution(h: Holding, fromMs: number, toMs: number, p: DecayParams): number {
  const a = Math.max(h.startMs, fromMs);
  const b = Math.min(h.endMs ?? toMs, toMs);
  if (b <= a || h.gpus <= 0) return 0;
  const k = rate(p);
  return (h.gpus / k) * (Math.exp(-k * clusterSeconds(b, toMs, p)) - Math.exp(-k * clusterSeconds(a, toMs, p)));
}

/**
 * Rolls every team's record forward to `nowMs`: decays what it had and adds the holdings since
 * its `asOfMs`. Teams without a record start from zero at `sinceMs` (the bootstrap window).
 */
export function rollUsage(
  records: ReadonlyMap<string, UsageRecord>,
  holdings: readonly Holding[],
  teamIds: readonly string[],
  nowMs: number,
  sinceMs: number,
  p: DecayParams,
): Map<string, UsageRecord> {
  const byTeam = new Map<string, Holding[]>();
  for (const h of holdings) byTeam.set(h.teamId, [...(byTeam.get(h.teamId) ?? []), h]);
  const out = new Map<string, UsageRecord>();
  for (const team of new Set([...teamIds, ...records.keys(), ...byTeam.keys()])) {
    const r = records.get(team);
    const from = r ? r.asOfMs : sinceMs;
    let gpuSeconds = r ? r.gpuSeconds * decayFactor(r.asOfMs, nowMs, p) : 0;
    for (const h of byTeam.get(team) ?? []) gpuSeconds += holdingContribution(h, from, nowMs, p);
    out.set(team, { gpuSeconds, asOfMs: Math.max(nowMs, from) });
  }
  return out;
}

/** Decayed average GPUs of a usage record (U * ln 2 / H): comparable with GPUs held now. */
export function decayedAverageGpus(gpuSeconds: number, p: DecayParams): number {
  return gpuSeconds * rate(p);
}

/** How far back a team without a record is read from its allocations: 10 half-lives (99.9 % of the weight). */
export function bootstrapWindowMs(p: DecayParams): number {
  return ((10 * p.halfLifeSeconds) / p.simSpeed) * 1000;
}
