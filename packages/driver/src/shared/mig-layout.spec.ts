import { assertValidMigLayout, MigLayoutError, migCreationOrder, migLayoutViolations, migProfileCounts, migProfilesOf } from './mig-layout';

describe('migLayoutViolations', () => {
  it.each([
    { name: 'MIG off (empty layout)', model: 'H100-80GB', layout: [] },
    { name: 'one 7g', model: 'A100-80GB', layout: [{ profile: '7g.80gb', start: 0 }] },
    {
      name: 'seven 1g slices',
      model: 'H100-80GB',
      layout: [0, 1, 2, 3, 4, 5, 6].map((start) => ({ profile: '1g.10gb', start })),
    },
    {
      name: 'all-balanced on H200 (2x1g + 2g + 3g)',
      model: 'H200-141GB',
      layout: [
        { profile: '1g.18gb', start: 0 },
        { profile: '1g.18gb', start: 1 },
        { profile: '2g.35gb', start: 2 },
        { profile: '3g.71gb', start: 4 },
      ],
    },
    {
      name: '4g + 3g',
      model: 'A100-40GB',
      layout: [
        { profile: '4g.20gb', start: 0 },
        { profile: '3g.20gb', start: 4 },
      ],
    },
    {
      name: 'one +me next to plain 1g slices',
      model: 'A100-80GB',
      layout: [
        { profile: '1g.10gb+me', start: 0 },
        { profile: '1g.10gb', start: 1 },
      ],
    },
    { name: 'four 1g.20gb (two memory slots each)', model: 'H100-80GB', layout: [0, 2, 4, 6].map((start) => ({ profile: '1g.20gb', start })) },
  ])('accepts $name', ({ model, layout }) => {
    expect(migLayoutViolations(model, layout)).toEqual([]);
  });

  it.each([
    { name: 'a GPU without MIG', model: 'L40S', layout: [{ profile: '1g.10gb', start: 0 }], wantRule: 'mig-capable' },
    { name: "another model's profile name", model: 'H200-141GB', layout: [{ profile: '1g.10gb', start: 0 }], wantRule: 'known-profile' },
    { name: 'a 3g starting at slot 2', model: 'A100-80GB', layout: [{ profile: '3g.40gb', start: 2 }], wantRule: 'legal-start' },
    { name: 'a 1g at slot 7 (no compute slice left there)', model: 'A100-80GB', layout: [{ profile: '1g.10gb', start: 7 }], wantRule: 'legal-start' },
    {
      name: 'a 1g at slot 0 under a 4g (the fragmentation example)',
      model: 'H100-80GB',
      layout: [
        { profile: '1g.10gb', start: 0 },
        { profile: '4g.40gb', start: 0 },
      ],
      wantRule: 'no-overlap',
    },
    {
      name: 'two +me instances',
      model: 'H100-80GB',
      layout: [
        { profile: '1g.10gb+me', start: 0 },
        { profile: '1g.10gb+me', start: 1 },
      ],
      wantRule: 'one-media-extension',
    },
  ])('refuses $name with rule $wantRule', ({ model, layout, wantRule }) => {
    expect(migLayoutViolations(model, layout).map((v) => v.rule)).toContain(wantRule);
  });

  it('names the slices that collide and the slot they share', () => {
    const violations = migLayoutViolations('A100-80GB', [
      { profile: '3g.40gb', start: 4 },
      { profile: '2g.20gb', start: 4 },
    ]);
    expect(violations).toEqual([{ rule: 'no-overlap', message: '2g.20gb@4 overlaps 3g.40gb@4 on memory slot 4' }]);
  });
});

describe('assertValidMigLayout', () => {
  it('throws a MigLayoutError carrying the first broken rule', () => {
    const attempt = () => assertValidMigLayout('A100-80GB', [{ profile: '4g.40gb', start: 4 }]);
    expect(attempt).toThrow(MigLayoutError);
    expect(attempt).toThrow(/\[legal-start\] 4g\.40gb cannot start at memory slot 4 \(legal starts: 0\)/);
  });
});

describe('migProfilesOf', () => {
  it('lists the seven profiles of a MIG-capable model and none for others', () => {
    const wantH100 = ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'];
    expect(migProfilesOf('H100-80GB').map((p) => p.name)).toEqual(wantH100);
    expect(migProfilesOf('L40S')).toEqual([]);
  });
});

describe('migCreationOrder', () => {
  it('creates the largest instance first (3-2-1-1: the 3g first)', () => {
    const layout = [
      { profile: '1g.10gb', start: 0 },
      { profile: '1g.10gb', start: 1 },
      { profile: '2g.20gb', start: 2 },
      { profile: '3g.40gb', start: 4 },
    ];
    const wantOrder = ['3g.40gb@4', '2g.20gb@2', '1g.10gb@0', '1g.10gb@1'];
    expect(migCreationOrder('A100-80GB', layout).map((s) => `${s.profile}@${s.start}`)).toEqual(wantOrder);
  });
});

describe('migProfileCounts', () => {
  it('counts instances per profile', () => {
    const layout = [
      { profile: '1g.10gb', start: 0 },
      { profile: '1g.10gb', start: 1 },
      { profile: '3g.40gb', start: 4 },
    ];
    expect(migProfileCounts(layout)).toEqual({ '1g.10gb': 2, '3g.40gb': 1 });
  });
});

describe('MIG geometry table', () => {
  it('admits exactly the 77 distinct profile multisets of a brute force over placements (docs/reference/gpu.md, MIG rule 7)', () => {
    const model = 'A100-80GB';
    const profiles = migProfilesOf(model).filter((p) => !p.mediaExtensions);
    const placements = profiles.flatMap((p) => p.starts.map((start) => ({ profile: p.name, start })));
    const multisets = new Set<string>();
    const extend = (layout: { profile: string; start: number }[], from: number): void => {
      for (let i = from; i < placements.length; i++) {
        const next = [...layout, placements[i]];
        if (migLayoutViolations(model, next).length > 0) continue;
        multisets.add(
          next
            .map((s) => s.profile)
            .sort()
            .join(','),
        );
        extend(next, i + 1);
      }
    };
    extend([], 0);
    const wantMultisets = 77;
    expect(multisets.size).toBe(wantMultisets);
  });
});
