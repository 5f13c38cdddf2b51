import { cycleHistogram } from './load';

describe('bench load: the cycles of the run', () => {
  const read = (counts: number[], sum: number) => ({
    buckets: [0.1, 1, 2.5, Infinity].map((le, i) => ({ le, n: counts[i]! })),
    count: counts[3]!,
    sum,
  });

  it('leaves the warm-up cycles out: quantiles and mean of the difference between two reads', () => {
    // warm-up: 10 cycles, two of them slow (cold code, the first full load)
    const before = read([6, 8, 10, 10], 4);
    // the run: 100 more cycles, all under 1 s
    const after = read([96, 108, 110, 110], 14);
    expect(cycleHistogram(before, after)).toEqual({ count: 100, p50Ms: 100, p99Ms: 1000, meanMs: 100 });
    // over the whole life of the workers, the warm-up's slow cycles set the p99
    expect(cycleHistogram(undefined, read([6, 8, 10, 10], 4)).p99Ms).toBe(2500);
    expect(cycleHistogram(before, undefined).count).toBe(0);
  });
});
