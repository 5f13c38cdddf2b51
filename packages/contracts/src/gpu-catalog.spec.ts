import {
  GPU_MODEL_SPECS,
  GPU_MODELS,
  MIG_COMPUTE_SLICES,
  MIG_GEOMETRY,
  MIG_MEMORY_SLOTS,
  MIG_MODELS,
  MIG_PROFILE_NAMES,
  PERSONAS,
  UNKNOWN_GPU_MODEL,
  gpuPower,
  migComputeSlices,
  migProfile,
  migProfilesFor,
  migSliceFraction,
  modelsWithMigProfile,
} from './index';

// The facts of docs/reference/gpu.md section 1, pinned.
describe('GPU catalog: MIG geometry', () => {
  it('A100 and H100 (and every MIG model) have 7 compute slices and 8 memory slots', () => {
    expect(MIG_COMPUTE_SLICES).toBe(7);
    expect(MIG_MEMORY_SLOTS).toBe(8);
    expect([...MIG_MODELS]).toEqual(['A100-40GB', 'A100-80GB', 'H100-80GB', 'H200-141GB']);
    for (const model of MIG_MODELS) expect(migProfilesFor(model).find((p) => p.class === '7g')).toMatchObject({ compute: 7, size: 8 });
  });

  it.each([
    ['A100-40GB', ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb']],
    ['A100-80GB', ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']],
    ['H100-80GB', ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']],
    ['H200-141GB', ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb']],
  ])('%s has the profiles of the table', (model, names) => {
    expect(migProfilesFor(model).map((p) => p.name)).toEqual(names);
  });

  it.each([
    // model, profile, GI id, compute, memory slots, memory GB, max per GPU, legal starts
    ['A100-80GB', '1g.10gb', 19, 1, 1, 10, 7, [0, 1, 2, 3, 4, 5, 6]],
    ['A100-80GB', '1g.10gb+me', 20, 1, 1, 10, 1, [0, 1, 2, 3, 4, 5, 6]],
    ['A100-40GB', '1g.10gb', 15, 1, 2, 10, 4, [0, 2, 4, 6]],
    ['H100-80GB', '1g.20gb', 15, 1, 2, 20, 4, [0, 2, 4, 6]],
    ['H100-80GB', '2g.20gb', 14, 2, 2, 20, 3, [0, 2, 4]],
    ['H100-80GB', '3g.40gb', 9, 3, 4, 40, 2, [0, 4]],
    ['A100-80GB', '4g.40gb', 5, 4, 4, 40, 1, [0]],
    ['H200-141GB', '7g.141gb', 0, 7, 8, 141, 1, [0]],
  ] as const)('%s %s', (model, name, giId, compute, size, memoryGB, maxPerGpu, starts) => {
    const p = migProfile(model, name)!;
    expect({ giId: p.giId, compute: p.compute, size: p.size, memoryGB: p.memoryGB, maxPerGpu: p.maxPerGpu, starts: [...p.starts] }).toEqual({
      giId,
      compute,
      size,
      memoryGB,
      maxPerGpu,
      starts: [...starts],
    });
  });

  it("A100-40GB's 2-slot 1g needs driver R525; no other profile names a driver", () => {
    expect(migProfile('A100-40GB', '1g.10gb')!.minDriver).toBe(525);
    const others = MIG_MODELS.flatMap((m) =>
      migProfilesFor(m)
        .filter((p) => p.minDriver !== undefined)
        .map((p) => `${m} ${p.name}`),
    );
    expect(others).toEqual(['A100-40GB 1g.10gb']);
  });

  it('every start keeps the instance inside the 8 memory slots', () => {
    for (const model of MIG_MODELS) for (const p of migProfilesFor(model)) for (const s of p.starts) expect(s + p.size).toBeLessThanOrEqual(MIG_MEMORY_SLOTS);
  });

  it('a profile name has the same compute slices on every model that has it', () => {
    for (const name of MIG_PROFILE_NAMES) {
      expect(new Set(modelsWithMigProfile(name).map((m) => migProfile(m, name)!.compute)).size).toBe(1);
    }
    expect(modelsWithMigProfile('1g.10gb')).toEqual(['A100-40GB', 'A100-80GB', 'H100-80GB']);
  });

  it('a model without MIG has no profiles', () => {
    expect(migProfilesFor('T4')).toEqual([]);
    expect(migProfilesFor('constructor')).toEqual([]);
  });
});

describe('GPU catalog: a MIG slice counts compute slices / 7 of a GPU', () => {
  it.each([
    ['1g.10gb', 1 / 7],
    ['1g.20gb', 1 / 7],
    ['2g.20gb', 2 / 7],
    ['3g.40gb', 3 / 7],
    ['4g.71gb', 4 / 7],
    ['7g.80gb', 1],
  ])('%s', (profile, fraction) => {
    expect(migSliceFraction(profile)).toBeCloseTo(fraction, 12);
  });

  it('on a given model, and undefined for a profile that does not exist', () => {
    expect(migComputeSlices('3g.71gb', 'H200-141GB')).toBe(3);
    expect(migSliceFraction('3g.71gb', 'H100-80GB')).toBeUndefined();
    expect(migSliceFraction('5g.50gb')).toBeUndefined();
  });
});

describe('GPU catalog: models', () => {
  it('memory, power and default price per model', () => {
    expect(Object.keys(GPU_MODEL_SPECS)).toEqual([...GPU_MODELS]);
    expect(
      Object.values(GPU_MODEL_SPECS).map(({ model, memoryGB, memoryMiB, idleW, busyW, pricePerGpuHour }) => [
        model,
        memoryGB,
        memoryMiB,
        idleW,
        busyW,
        pricePerGpuHour,
      ]),
    ).toEqual([
      ['H100-80GB', 80, 81559, 70, 700, 2.49],
      ['H200-141GB', 141, 143771, 75, 700, 3.49],
      ['A100-80GB', 80, 81920, 55, 400, 1.79],
      ['A100-40GB', 40, 40960, 50, 400, 1.29],
    ]);
  });

  it('the MIG-capable models are the ones with a geometry', () => {
    expect(
      Object.values(GPU_MODEL_SPECS)
        .filter((s) => s.migCapable)
        .map((s) => s.model)
        .sort(),
    ).toEqual(Object.keys(MIG_GEOMETRY).sort());
  });

  it('an unknown model draws the fallback power', () => {
    expect(gpuPower('T4')).toEqual({ idleW: UNKNOWN_GPU_MODEL.idleW, busyW: UNKNOWN_GPU_MODEL.busyW });
    expect(UNKNOWN_GPU_MODEL).toEqual({ idleW: 50, busyW: 300, pricePerGpuHour: 1 });
    expect(gpuPower('H100-80GB')).toEqual({ idleW: 70, busyW: 700 });
  });

  it('personas', () => {
    expect([...PERSONAS]).toEqual(['container', 'vm-passthrough', 'inference']);
  });
});
