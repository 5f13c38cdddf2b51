/**
 * Crash points: named moments where a worker dying hurts most.
 * `GANTRY_CRASH_POINTS=placement.commit=0.2,mig.apply=1` arms points with a probability; an
 * armed point kills the process with SIGKILL on the spot (no cleanup, like `kill -9`), after
 * one line on stderr. Unset (production): one parse at load, then a Map miss per call.
 */
export const CRASH_POINTS = [
  /** Inside the placement commit: allocation rows written, transaction not committed. */
  'placement.commit',
  /** Placement committed, start not yet enqueued. */
  'placement.committed',
  /** driver.start done, the job not yet marked running. */
  'lifecycle.started',
  /** GPU out of scheduling with a migTarget, before the driver applies the layout. */
  'mig.requested',
  /** The driver applied the layout, the database has not recorded it. */
  'mig.applied',
  /** Node switching and drained, before driver.setPersona. */
  'persona.requested',
  /** driver.setPersona done, the node not yet ready in the database. */
  'persona.switched',
  /** Failover: node or GPU taken out of scheduling, jobs not moved yet. */
  'failover.cordoned',
  /** Failover: the node's jobs requeued, remediation not queued yet. */
  'failover.requeued',
  /** Failover: mid remediation (reset or reboot asked of the driver, not validated). */
  'failover.remediating',
  /** driver.suspend done (checkpoint taken), the database has not recorded it. */
  'suspend.checkpointed',
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

/** Parses `name=probability,...` (a bare name means 1). Unknown names are ignored. */
export function parseCrashPoints(spec: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const part of (spec ?? '').split(',')) {
    const [name, p] = part.trim().split('=');
    if (!name) continue;
    const prob = p === undefined ? 1 : Number(p);
    if (Number.isFinite(prob) && prob > 0) out.set(name, Math.min(1, prob));
  }
  return out;
}

let armed: Map<string, number> | undefined;

/** Dies here (SIGKILL) when GANTRY_CRASH_POINTS arms this point and the dice say so. */
export function crashPoint(name: CrashPointName): void {
  armed ??= parseCrashPoints(process.env.GANTRY_CRASH_POINTS);
  if (armed.size === 0) return;
  const p = armed.get(name);
  if (p === undefined || Math.random() >= p) return;
  process.stderr.write(`CRASH POINT ${name}: pid ${process.pid} killing itself (SIGKILL)\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** Tests: re-read the environment on the next call. */
export function resetCrashPointsForTest(): void {
  armed = undefined;
}
