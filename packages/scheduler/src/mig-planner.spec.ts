import { planMigLayouts, type MigPlanInput } from './mig-planner';
import { validateMigLayout } from './mig-geometry';
import { node } from './testing/builders';

const snap = (...nodes: ReturnType<ReturnType<typeof node>['build']>[]) => ({ nodes });

describe('planMigLayouts', () => {
  it.each([
    {
      name: 'free slice already there: no change',
      input: { snapshot: snap(node('a').gpus(1).mig(0, '1g.10gb@0').build()), migDemand: [{ profile: '1g.10gb', count: 1 }] },
      wantChanges: [],
    },
    {
      name: 'creates in free slots without touching running slices',
      input: { snapshot: snap(node('a').gpus(1).mig(0, '3g.40gb@4*').build()), migDemand: [{ profile: '2g.20gb', count: 2 }] },
      wantChanges: [
        {
          gpuId: 'a/gpu0',
          action: 'create',
          created: [
            { profile: '2g.20gb', start: 0 },
            { profile: '2g.20gb', start: 2 },
          ],
        },
      ],
    },
    {
      name: 'partitions an idle whole GPU only when MIG GPUs are full, on the node with fewest idle GPUs',
      input: {
        snapshot: snap(node('full').gpus(8).build(), node('busy').gpus(8).allocated(0, 1, 2, 3, 4, 5).build()),
        migDemand: [{ profile: '3g.40gb', count: 2 }],
      },
      wantChanges: [
        {
          nodeId: 'busy',
          action: 'partition',
          created: [
            { profile: '3g.40gb', start: 0 },
            { profile: '3g.40gb', start: 4 },
          ],
        },
      ],
    },
    {
      name: 'does not partition a GPU that is in use',
      input: { snapshot: snap(node('a').gpus(1).allocated(0).build()), migDemand: [{ profile: '1g.10gb', count: 1 }] },
      wantChanges: [],
      wantUnmet: 1,
    },
    {
      name: 'returns an idle MIG GPU to full size for whole-GPU demand',
      input: { snapshot: snap(node('a').gpus(2).allocated(0).mig(1, '1g.10gb@0', '1g.10gb@1').build()), migDemand: [], wholeDemand: [{ count: 1 }] },
      wantChanges: [{ gpuId: 'a/gpu1', action: 'disable', layout: [] }],
    },
    {
      name: 'keeps a MIG GPU whose slices run work',
      input: { snapshot: snap(node('a').gpus(1).mig(0, '1g.10gb@0*', '1g.10gb@1').build()), migDemand: [], wholeDemand: [{ count: 1 }] },
      wantChanges: [],
    },
    {
      name: 'hysteresis: a GPU changed a minute ago is left alone',
      input: {
        snapshot: snap(node('a').gpus(1).mig(0, '1g.10gb@0').build()),
        migDemand: [],
        wholeDemand: [{ count: 1 }],
        lastChangedAtMs: { 'a/gpu0': 1_000_000 },
        nowMs: 1_060_000,
      },
      wantChanges: [],
    },
    {
      name: 'respects allowed models',
      input: {
        snapshot: snap(node('a').gpus(1, 'A100-80GB').build(), node('h').gpus(1, 'H100-80GB').build()),
        migDemand: [{ profile: '1g.10gb', count: 1, gpuModels: ['H100-80GB'] }],
      },
      wantChanges: [{ nodeId: 'h', action: 'partition' }],
    },
  ])('$name', ({ input, wantChanges, wantUnmet }) => {
    const plan = planMigLayouts(input as MigPlanInput);
    expect(plan.changes).toHaveLength(wantChanges.length);
    wantChanges.forEach((w, i) => expect(plan.changes[i]).toMatchObject(w));
    for (const c of plan.changes) expect(validateMigLayout(c.model, c.layout).ok).toBe(true);
    expect(plan.unmet.reduce((a, u) => a + u.count, 0)).toBe(wantUnmet ?? 0);
  });

  it('returns layouts in NVIDIA creation order (largest first)', () => {
    const plan = planMigLayouts({
      snapshot: snap(node('a').gpus(1).build()),
      migDemand: [
        { profile: '1g.10gb', count: 2 },
        { profile: '3g.40gb', count: 1 },
        { profile: '2g.20gb', count: 1 },
      ],
    });
    expect(plan.changes[0]!.layout.map((e) => e.profile)).toEqual(['3g.40gb', '2g.20gb', '1g.10gb', '1g.10gb']);
  });
});
