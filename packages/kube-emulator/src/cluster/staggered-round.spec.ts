import { staggeredRound } from './staggered-round';

describe('staggeredRound', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs every item once per period, spread over it rather than all at once', () => {
    const items = Array.from({ length: 100 }, (_, i) => i);
    const runs: { item: number; at: number }[] = [];
    const t0 = Date.now();
    const round = staggeredRound(
      () => items,
      10_000,
      (item) => runs.push({ item, at: Date.now() - t0 }),
    );
    jest.advanceTimersByTime(10_000);
    expect(runs.map((r) => r.item).sort((a, b) => a - b)).toEqual(items);
    // spread: no more than a tick's share (100 items x 100 ms / 10 s = 1) at any one time
    const perInstant = new Map<number, number>();
    for (const r of runs) perInstant.set(r.at, (perInstant.get(r.at) ?? 0) + 1);
    expect(Math.max(...perInstant.values())).toBeLessThanOrEqual(1);
    jest.advanceTimersByTime(10_000);
    expect(runs).toHaveLength(200);
    round.stop();
    jest.advanceTimersByTime(10_000);
    expect(runs).toHaveLength(200);
  });

  it('catches up after a late tick, and skips items that left the list', () => {
    let items = ['a', 'b', 'c', 'd'];
    const runs: string[] = [];
    const round = staggeredRound(
      () => items,
      1000,
      (item) => runs.push(item),
    );
    jest.advanceTimersByTime(1000);
    expect(runs).toEqual(['a', 'b', 'c', 'd']);
    items = ['a', 'c'];
    jest.advanceTimersByTime(1000);
    expect(runs.slice(4).sort()).toEqual(['a', 'c']);
    round.stop();
  });
});
