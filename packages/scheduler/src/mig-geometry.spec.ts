import { MIG_GEOMETRY, migFreeStarts, partitionsByMode, migProfilesFor, validateMigLayout, type MigLayoutEntry } from './mig-geometry';

const L = (...s: string[]): MigLayoutEntry[] =>
  s.map((x) => {
    const [profile, start] = x.split('@');
    return { profile: profile!, start: Number(start) };
  });

describe('MIG geometry table', () => {
  it.each([
    ['A100-40GB', ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb']],
    ['A100-80GB', ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']],
    ['H100-80GB', ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']],
    ['H200-141GB', ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb']],
    ['B200-180GB', ['1g.23gb', '1g.23gb+me', '1g.45gb', '2g.45gb', '3g.90gb', '4g.90gb', '7g.180gb']],
  ])('%s has the profiles of docs/reference/gpu.md section 1', (model, wantNames) => {
    expect(migProfilesFor(model).map((p) => p.name)).toEqual(wantNames);
  });

  it.each([
    ['1g', [0, 1, 2, 3, 4, 5, 6], 1, 7],
    ['1g.2mem', [0, 2, 4, 6], 2, 4],
    ['2g', [0, 2, 4], 2, 3],
    ['3g', [0, 4], 4, 2],
    ['4g', [0], 4, 1],
    ['7g', [0], 8, 1],
  ])('class %s: legal starts, size and max per GPU', (cls, wantStarts, wantSize, wantMax) => {
    for (const model of Object.keys(MIG_GEOMETRY).filter((m) => !partitionsByMode(m))) {
      const p = migProfilesFor(model).find((x) => x.class === cls)!;
      expect({ starts: [...p.starts], size: p.size, max: p.maxPerGpu }).toEqual({ starts: wantStarts, size: wantSize, max: wantMax });
    }
  });

  it('a model without MIG has no profiles', () => {
    expect(migProfilesFor('T4')).toEqual([]);
  });
});

describe('validateMigLayout', () => {
  it.each([
    { name: 'empty layout turns MIG off', model: 'H100-80GB', layout: L(), wantOk: true },
    { name: 'balanced 3-2-1-1 (NVIDIA example)', model: 'A100-80GB', layout: L('3g.40gb@4', '2g.20gb@2', '1g.10gb@0', '1g.10gb@1'), wantOk: true },
    {
      name: 'seven 1g slices',
      model: 'H100-80GB',
      layout: L('1g.10gb@0', '1g.10gb@1', '1g.10gb@2', '1g.10gb@3', '1g.10gb@4', '1g.10gb@5', '1g.10gb@6'),
      wantOk: true,
    },
    { name: '4g + 3g', model: 'H200-141GB', layout: L('4g.71gb@0', '3g.71gb@4'), wantOk: true },
    { name: 'four 2-slot 1g', model: 'A100-80GB', layout: L('1g.20gb@0', '1g.20gb@2', '1g.20gb@4', '1g.20gb@6'), wantOk: true },
    { name: 'unknown profile on model', model: 'A100-40GB', layout: L('1g.20gb@0'), wantOk: false, wantRule: 'unknown_profile' },
    { name: 'illegal start for 3g', model: 'H100-80GB', layout: L('3g.40gb@2'), wantOk: false, wantRule: 'illegal_start' },
    { name: '1g cannot start at slot 7', model: 'H100-80GB', layout: L('1g.10gb@7'), wantOk: false, wantRule: 'illegal_start' },
    { name: 'overlap 1g@0 with 3g@0 (fragmentation example)', model: 'A100-80GB', layout: L('1g.10gb@0', '3g.40gb@0'), wantOk: false, wantRule: 'overlap' },
    { name: 'overlap 7g with anything', model: 'H100-80GB', layout: L('7g.80gb@0', '1g.10gb@6'), wantOk: false, wantRule: 'overlap' },
    { name: 'two +me instances', model: 'H100-80GB', layout: L('1g.10gb+me@0', '1g.10gb+me@1'), wantOk: false, wantRule: 'multiple_me' },
    { name: 'not a MIG model', model: 'T4', layout: L('1g.10gb@0'), wantOk: false, wantRule: 'unknown_model' },
  ])('$name', ({ model, layout, wantOk, wantRule }) => {
    const r = validateMigLayout(model, layout);
    expect(r.ok).toBe(wantOk);
    if (!r.ok) {
      expect(r.rule).toBe(wantRule);
      expect(r.message.length).toBeGreaterThan(10);
    }
  });

  it.each([
    { name: '4g + 3g needs R510', layout: L('4g.40gb@0', '3g.40gb@4'), driver: 470, wantRule: 'driver_too_old' },
    { name: '4g + 3g fine on R535', layout: L('4g.40gb@0', '3g.40gb@4'), driver: 535, wantRule: undefined },
  ])('$name', ({ layout, driver, wantRule }) => {
    const r = validateMigLayout('A100-80GB', layout, { driverMajor: driver });
    expect(r.ok ? undefined : r.rule).toBe(wantRule);
  });

  it('brute force over the geometry finds 77 distinct non-empty profile multisets (rule 7)', () => {
    const profiles = migProfilesFor('A100-80GB').filter((p) => !p.name.includes('+me'));
    const seen = new Set<string>();
    const walk = (layout: MigLayoutEntry[]) => {
      for (const p of profiles) {
        for (const s of p.starts) {
          const next = [...layout, { profile: p.name, start: s }];
          if (!validateMigLayout('A100-80GB', next).ok) continue;
          const key = next
            .map((e) => e.profile)
            .sort()
            .join(',');
          if (seen.has(key)) continue;
          seen.add(key);
          walk(next);
        }
      }
    };
    walk([]);
    expect(seen.size).toBe(77);
  });

  it('free starts skip occupied slots', () => {
    expect(migFreeStarts('H100-80GB', L('1g.10gb@0'), '3g.40gb')).toEqual([4]);
    expect(migFreeStarts('H100-80GB', L('1g.10gb@0'), '7g.80gb')).toEqual([]);
  });
});
