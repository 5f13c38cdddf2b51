import { rollupPlan } from './utilization.repository';

describe('rollupPlan (which reports read their rollup rows directly)', () => {
  it.each([
    { name: 'teams hourly from hour rollups', groupBy: 'team' as const, step: 3600, rollup: 3600, want: 'direct' },
    { name: 'teams daily from day rollups', groupBy: 'team' as const, step: 86400, rollup: 86400, want: 'direct' },
    { name: 'teams by the minute from minute rollups', groupBy: 'team' as const, step: 60, rollup: 60, want: 'direct' },
    { name: 'teams 6-hourly from hour rollups (a multiple: re-bucketed)', groupBy: 'team' as const, step: 6 * 3600, rollup: 3600, want: 'rebucket' },
    { name: 'teams in 15-minute steps from minute rollups', groupBy: 'team' as const, step: 900, rollup: 60, want: 'rebucket' },
    { name: 'tenants hourly (several teams a bucket)', groupBy: 'tenant' as const, step: 3600, rollup: 3600, want: 'rebucket' },
    { name: 'GPU models hourly (several holders a bucket)', groupBy: 'gpuModel' as const, step: 3600, rollup: 3600, want: 'rebucket' },
    { name: 'nodes daily (several holders per node)', groupBy: 'node' as const, step: 86400, rollup: 86400, want: 'rebucket' },
  ])('$name: $want', ({ groupBy, step, rollup, want }) => {
    expect(rollupPlan(groupBy, step, rollup)).toBe(want);
  });
});
