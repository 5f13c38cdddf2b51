import type { Reason } from '@gantry/contracts';

/** How long a pending job's reasons may show figures that have since moved (the same reasons otherwise). */
export const REASON_REFRESH_MS = 5000;

/** The reasons without their figures: what changes when the cause changes, not when a count moves. */
function gist(reasons: readonly Reason[]): string {
  return reasons.map((r) => `${r.code}:${r.message.replace(/\d[\d,.]*/g, '#')}`).join('\n');
}

function text(reasons: unknown): string {
  return JSON.stringify(reasons ?? []);
}

/**
 * Which pending jobs' reasons a cycle writes. A reason whose cause changed (another code, another
 * sentence) is written at once; one whose figures alone moved ("3 of 64 nodes fit" -> "5 of 64",
 * a team's GPUs in use) at most every REASON_REFRESH_MS per job. Every cycle recomputes the
 * reasons of the whole queue and the figures move with almost every placement: writing each
 * change rewrote hundreds of Job rows per cycle, several times a second, for text nobody reads
 * that often. Kept per worker process (a job another worker wrote is written once more).
 */
export class ReasonRefresh {
  /** Per job: when this process last wrote its reasons. */
  private writtenAt = new Map<string, number>();

  constructor(private readonly refreshMs = REASON_REFRESH_MS) {}

  /** The updates to write now, of `next` (stored: the reasons as read at the start of the cycle). */
  due<U extends { jobId: string; reasons: Reason[] }>(next: readonly U[], stored: (jobId: string) => unknown, nowMs: number): U[] {
    return next.filter((u) => {
      const before = stored(u.jobId);
      if (text(before) === text(u.reasons)) return false;
      if (!Array.isArray(before) || gist(before as Reason[]) !== gist(u.reasons)) return true;
      const at = this.writtenAt.get(u.jobId);
      return at === undefined || nowMs - at >= this.refreshMs;
    });
  }

  /** Records what was written, and forgets jobs that are no longer pending (`pending`: the cycle's queue). */
  written(jobIds: readonly string[], pending: Iterable<string>, nowMs: number): void {
    const kept = new Map<string, number>();
    for (const id of pending) {
      const at = this.writtenAt.get(id);
      if (at !== undefined) kept.set(id, at);
    }
    for (const id of jobIds) kept.set(id, nowMs);
    this.writtenAt = kept;
  }
}
