/**
 * Runs a task for every item once per period, the items spread evenly over the period: a thousand
 * kubelets each renew their Lease every 10 s on their own clock, not all in the same millisecond.
 * (One timer for all of them: each tick takes the next slice of the round.)
 */
export interface StaggeredRound {
  stop(): void;
}

/** The shortest interval between ticks: below it, items share a tick. */
export const MIN_TICK_MS = 50;

export function staggeredRound<T>(items: () => readonly T[], periodMs: number, task: (item: T) => void): StaggeredRound {
  let next = 0;
  let due = 0;
  let last = Date.now();
  const tickMs = Math.max(MIN_TICK_MS, periodMs / Math.max(1, items().length));
  const timer = setInterval(() => {
    const now = Date.now();
    const all = items();
    // how many items the time since the last tick owes (a late tick catches up), so that the
    // round covers every item once per period
    due = Math.min(all.length, due + (all.length * (now - last)) / periodMs);
    last = now;
    for (; due >= 1; due--) {
      if (next >= all.length) next = 0;
      task(all[next++]!);
    }
  }, tickMs);
  return { stop: () => clearInterval(timer) };
}
