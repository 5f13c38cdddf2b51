import { partitionModeLayoutOf } from '@gantry/contracts';
import { runCycle } from './cycle';
import { validateMigLayout } from './mig-geometry';
import { planMigLayouts } from './mig-planner';
import { job, node } from './testing/builders';
import { validateRequest, inventoryOf } from './validate-request';
import type { ClusterSnapshot, CycleDecision, NodeState } from './types';

// An AMD Instinct MI300X enters as catalog data (@gantry/contracts): the same engine, layout
// rules and planner serve it, with its one rule of its own (a mode splits the whole GPU).
const MI = 'MI300X-192GB';
const cluster = (...nodes: NodeState[]): ClusterSnapshot => ({ nodes });
const gpusOf = (d: CycleDecision, jobId: string) => d.placed.find((p) => p.jobId === jobId)?.replicas.flatMap((r) => r.gpus);
const cpx4 = (busy: number[] = []) => partitionModeLayoutOf(MI, 'cpx_nps4')!.map((e) => `${e.profile}@${e.start}${busy.includes(e.start) ? '*' : ''}`);

describe('MI300X layouts: a partition mode is all or nothing', () => {
  it.each([
    { name: 'CPX/NPS4: 8 partitions of one XCD', layout: partitionModeLayoutOf(MI, 'cpx_nps4')!, ok: true },
    { name: 'DPX/NPS1: 2 partitions of 4 XCDs', layout: partitionModeLayoutOf(MI, 'dpx_nps1')!, ok: true },
    { name: 'SPX (no partitions): the whole GPU', layout: [], ok: true },
    { name: 'half a QPX', layout: partitionModeLayoutOf(MI, 'qpx_nps1')!.slice(0, 2), ok: false, rule: 'partial_mode' },
    {
      name: 'DPX and QPX mixed',
      layout: [
        { profile: 'dpx_nps1', start: 0 },
        { profile: 'qpx_nps1', start: 4 },
        { profile: 'qpx_nps1', start: 6 },
      ],
      ok: false,
      rule: 'mixed_modes',
    },
    { name: 'an NVIDIA profile', layout: [{ profile: '1g.10gb', start: 0 }], ok: false, rule: 'unknown_profile' },
    {
      name: 'a CPX partition on a QPX start that is taken twice',
      layout: [...partitionModeLayoutOf(MI, 'cpx_nps1')!, { profile: 'cpx_nps1', start: 0 }],
      ok: false,
      rule: 'overlap',
    },
  ])('$name', ({ layout, ok, rule }) => {
    const v = validateMigLayout(MI, layout);
    expect(v.ok).toBe(ok);
    if (!v.ok) expect(v.rule).toBe(rule);
  });
});

describe('MI300X placement in the engine', () => {
  it('a cpx_nps4 job lands on a free CPX partition, never on a busy one nor on an H100', () => {
    const nodes = [
      node('h').gpus(8, 'H100-80GB').mig(0, '1g.10gb@0').build(),
      node('mi')
        .gpus(8, MI)
        .mig(3, ...cpx4([0, 1, 2]))
        .build(),
    ];
    const d = runCycle(cluster(...nodes), [job('j').migSlice('cpx_nps4').build()]);
    const gpus = gpusOf(d, 'j')!;
    expect(gpus).toHaveLength(1);
    expect(gpus[0]).toMatchObject({ gpuId: 'mi/gpu3', migProfile: 'cpx_nps4' });
    expect([0, 1, 2]).not.toContain(gpus[0]!.migStart);
  });

  it('8 replicas fill the 8 partitions of one GPU; a 9th waits', () => {
    const nodes = [
      node('mi')
        .gpus(1, MI)
        .mig(0, ...cpx4())
        .build(),
    ];
    const eight = runCycle(cluster(...nodes), [job('j').migSlice('cpx_nps4').replicas(8).build()]);
    expect(new Set(gpusOf(eight, 'j')!.map((g) => g.migStart))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7]));
    const nine = runCycle(cluster(...nodes), [job('k').migSlice('cpx_nps4').replicas(9).build()]);
    expect(nine.placed).toEqual([]);
  });

  it('a whole-GPU job can use an SPX MI300X but not a partitioned one', () => {
    const nodes = [
      node('mi')
        .gpus(2, MI)
        .mig(0, ...cpx4())
        .build(),
    ];
    const d = runCycle(cluster(...nodes), [job('w').gpus(1).models(MI).build()]);
    expect(gpusOf(d, 'w')).toEqual([expect.objectContaining({ gpuId: 'mi/gpu1' })]);
  });

  it('submission checks know the profiles and how many partitions a node holds', () => {
    const inv = inventoryOf(cluster(node('mi').gpus(2, MI).build()));
    expect(validateRequest({ request: { migProfile: 'cpx_nps4' }, replicas: 16, topology: { level: 'node', required: true } }, inv)).toEqual({ ok: true });
    expect(validateRequest({ request: { migProfile: 'cpx_nps4' }, replicas: 17, topology: { level: 'node', required: true } }, inv)).toMatchObject({
      ok: false,
      code: 'impossible_topology',
    });
    expect(validateRequest({ request: { migProfile: 'dpx_nps4' } }, inv)).toMatchObject({ ok: false, code: 'unknown_mig_profile' });
  });
});

describe('MI300X in the partition planner', () => {
  it('partitions an idle SPX GPU into the whole mode, even for one partition of demand', () => {
    const plan = planMigLayouts({ snapshot: cluster(node('mi').gpus(2, MI).allocated(0).build()), migDemand: [{ profile: 'qpx_nps1', count: 1 }] });
    expect(plan.unmet).toEqual([]);
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({ gpuId: 'mi/gpu1', action: 'partition' });
    expect(plan.changes[0]!.layout.map((e) => `${e.profile}@${e.start}`).sort()).toEqual(['qpx_nps1@0', 'qpx_nps1@2', 'qpx_nps1@4', 'qpx_nps1@6']);
    expect(validateMigLayout(MI, plan.changes[0]!.layout).ok).toBe(true);
  });

  it('never adds partitions of another mode to a partitioned GPU; 10 CPX partitions take two GPUs', () => {
    const partitioned = planMigLayouts({
      snapshot: cluster(
        node('mi')
          .gpus(1, MI)
          .mig(0, ...cpx4([0]))
          .build(),
      ),
      migDemand: [{ profile: 'dpx_nps1', count: 1 }],
    });
    expect(partitioned.changes).toEqual([]);
    expect(partitioned.unmet).toHaveLength(1);
    const two = planMigLayouts({ snapshot: cluster(node('mi').gpus(4, MI).build()), migDemand: [{ profile: 'cpx_nps4', count: 10 }] });
    expect(two.changes).toHaveLength(2);
    expect(two.unmet).toEqual([]);
    for (const c of two.changes) expect(validateMigLayout(MI, c.layout).ok).toBe(true);
  });
});
