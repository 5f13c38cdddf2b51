import { kubernetesSpecs } from '@gantry/driver';
import { emulatedNodesOf } from '../cluster/emulated-node';
import { smallTopology } from '../__tests__/harness';
import { placeLargestFirst, planMigConfig } from './mig-parted';

const node = () => emulatedNodesOf(smallTopology(1, 2))[0];

describe('placeLargestFirst', () => {
  it.each([
    ['all-balanced counts', { '1g.10gb': 2, '2g.20gb': 1, '3g.40gb': 1 }, ['2g.20gb@0', '1g.10gb@2', '1g.10gb@3', '3g.40gb@4']],
    ['seven 1g', { '1g.10gb': 7 }, ['1g.10gb@0', '1g.10gb@1', '1g.10gb@2', '1g.10gb@3', '1g.10gb@4', '1g.10gb@5', '1g.10gb@6']],
    ['one 7g', { '7g.80gb': 1 }, ['7g.80gb@0']],
  ])('places %s', (_what, counts, want) => {
    const placed = placeLargestFirst('H100-80GB', counts);
    expect(placed.ok && placed.layout.map((s) => `${s.profile}@${s.start}`)).toEqual(want);
  });

  it.each([
    ['three 3g', { '3g.40gb': 3 }],
    ['a 7g and a 1g', { '7g.80gb': 1, '1g.10gb': 1 }],
    ['a profile of another model', { '1g.18gb': 1 }],
  ])('refuses %s', (_what, counts) => {
    expect(placeLargestFirst('H100-80GB', counts).ok).toBe(false);
  });
});

describe('planMigConfig', () => {
  it('uses the placements of gantry.io/mig-layouts when the annotation stands for the config', () => {
    const layouts = {
      1: [
        { profile: '3g.40gb', start: 4 },
        { profile: '1g.10gb', start: 0 },
      ],
    };
    const name = kubernetesSpecs.migConfigName(layouts);
    const file = kubernetesSpecs.withMigPartedConfig(undefined, name, kubernetesSpecs.migPartedDevices(layouts, 2));
    const plan = planMigConfig(node(), name, file, layouts);
    expect(plan).toEqual({
      ok: true,
      layouts: {
        0: [],
        1: [
          { profile: '3g.40gb', start: 4 },
          { profile: '1g.10gb', start: 0 },
        ],
      },
    });
  });

  it('fails when a config asks for more than the geometry allows on a GPU', () => {
    const file = { version: 'v1' as const, 'mig-configs': { bad: [{ devices: [0], 'mig-enabled': true, 'mig-devices': { '4g.40gb': 1, '3g.40gb': 2 } }] } };
    const plan = planMigConfig(node(), 'bad', file, undefined);
    expect(plan.ok).toBe(false);
  });

  it('knows the stock configs and refuses unknown ones', () => {
    expect(planMigConfig(node(), 'all-1g.10gb', undefined, undefined)).toMatchObject({
      ok: true,
      layouts: { 0: expect.arrayContaining([{ profile: '1g.10gb', start: 6 }]) },
    });
    expect(planMigConfig(node(), 'all-disabled', undefined, undefined)).toEqual({ ok: true, layouts: { 0: [], 1: [] } });
    expect(planMigConfig(node(), 'somebody-elses', undefined, undefined).ok).toBe(false);
  });
});
