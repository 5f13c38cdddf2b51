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
  partitionGeometry,
  partitionModeLayout,
  partitionModeLayoutOf,
  partitionModeOf,
} from './index';

// The facts of docs/reference/gpu.md section 1, pinned.
describe('GPU catalog: MIG geometry', () => {
  it('A100, H100, H200 and B200 (every MIG model) have 7 compute slices and 8 memory slots', () => {
    expect(MIG_COMPUTE_SLICES).toBe(7);
    expect(MIG_MEMORY_SLOTS).toBe(8);
    expect([...MIG_MODELS]).toEqual(['A100-40GB', 'A100-80GB', 'H100-80GB', 'H200-141GB', 'B200-180GB', 'MI300X-192GB']);
    const mig = MIG_MODELS.filter((m) => partitionGeometry(m)!.scheme === 'mig');
    expect(mig).toEqual(['A100-40GB', 'A100-80GB', 'H100-80GB', 'H200-141GB', 'B200-180GB']);
    for (const model of mig) {
      expect(partitionGeometry(model)).toMatchObject({ computeSlices: 7, memorySlots: 8 });
      expect(migProfilesFor(model).find((p) => p.class === '7g')).toMatchObject({ compute: 7, size: 8 });
    }
  });

  it.each([
    ['A100-40GB', ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb']],
    ['A100-80GB', ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']],
    ['H100-80GB', ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb']],
    ['H200-141GB', ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb']],
    ['B200-180GB', ['1g.23gb', '1g.23gb+me', '1g.45gb', '2g.45gb', '3g.90gb', '4g.90gb', '7g.180gb']],
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
    ['H200-141GB', '1g.35gb', 15, 1, 2, 35, 4, [0, 2, 4, 6]],
    ['B200-180GB', '1g.23gb', 19, 1, 1, 23, 7, [0, 1, 2, 3, 4, 5, 6]],
    ['B200-180GB', '2g.45gb', 14, 2, 2, 45, 3, [0, 2, 4]],
    ['B200-180GB', '3g.90gb', 9, 3, 4, 90, 2, [0, 4]],
    ['B200-180GB', '4g.90gb', 5, 4, 4, 90, 1, [0]],
    ['B200-180GB', '7g.180gb', 0, 7, 8, 180, 1, [0]],
    // AMD: compute = XCDs, size = XCD slots, GI id = amd-smi accelerator partition profile index
    ['MI300X-192GB', 'dpx_nps1', 1, 4, 4, 96, 2, [0, 4]],
    ['MI300X-192GB', 'qpx_nps1', 2, 2, 2, 48, 4, [0, 2, 4, 6]],
    ['MI300X-192GB', 'cpx_nps1', 3, 1, 1, 24, 8, [0, 1, 2, 3, 4, 5, 6, 7]],
    ['MI300X-192GB', 'cpx_nps4', 3, 1, 1, 24, 8, [0, 1, 2, 3, 4, 5, 6, 7]],
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

  it("every start keeps the instance inside the model's memory slots", () => {
    for (const model of MIG_MODELS)
      for (const p of migProfilesFor(model)) for (const s of p.starts) expect(s + p.size).toBeLessThanOrEqual(partitionGeometry(model)!.memorySlots);
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

describe("GPU catalog: a partition counts its compute slices / the model's (7 on MIG GPUs, 8 XCDs on an MI300X)", () => {
  it.each([
    ['1g.10gb', 1 / 7],
    ['1g.20gb', 1 / 7],
    ['2g.20gb', 2 / 7],
    ['3g.40gb', 3 / 7],
    ['4g.71gb', 4 / 7],
    ['7g.80gb', 1],
    ['2g.45gb', 2 / 7],
    ['cpx_nps4', 1 / 8],
    ['qpx_nps1', 2 / 8],
    ['dpx_nps1', 4 / 8],
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
      ['B200-180GB', 180, 183359, 120, 1000, 5.99],
      ['A100-80GB', 80, 81920, 55, 400, 1.79],
      ['A100-40GB', 40, 40960, 50, 400, 1.29],
      ['MI300X-192GB', 192, 196592, 140, 750, 2.99],
    ]);
    expect(GPU_MODEL_SPECS['MI300X-192GB']!.vendor).toBe('amd');
    expect(GPU_MODEL_SPECS['B200-180GB']!.vendor).toBe('nvidia');
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

// The facts of docs/accelerators.md (AMD Instinct MI300X partitioning), pinned.
describe('GPU catalog: MI300X partition modes', () => {
  const MI = 'MI300X-192GB';

  it('8 XCDs (slots) and 192 GB; SPX, DPX, QPX, CPX split it into 1, 2, 4, 8 partitions', () => {
    const g = partitionGeometry(MI)!;
    expect(g).toMatchObject({ scheme: 'modes', computeUnit: 'xcd', computeSlices: 8, memorySlots: 8 });
    expect(g.computeModes!.map((m) => [m.name, m.partitions])).toEqual([
      ['SPX', 1],
      ['DPX', 2],
      ['QPX', 4],
      ['CPX', 8],
    ]);
    expect(g.memoryModes!.map((m) => m.name)).toEqual(['NPS1', 'NPS4']);
    // each profile's partitions cover the 8 XCDs exactly and split the 192 GB evenly
    for (const p of g.profiles) {
      expect(p.maxPerGpu * p.size).toBe(8);
      expect(p.maxPerGpu * p.memoryGB).toBe(192);
    }
  });

  it('NPS1 allows every compute mode; NPS4 only CPX (memory partitions never outnumber compute partitions)', () => {
    expect(partitionModeLayout(MI, 'SPX', 'NPS1')).toEqual({ ok: true, profile: null, layout: [] });
    expect(partitionModeLayout(MI, 'DPX', 'NPS1')).toMatchObject({
      ok: true,
      layout: [
        { profile: 'dpx_nps1', start: 0 },
        { profile: 'dpx_nps1', start: 4 },
      ],
    });
    expect(partitionModeLayout(MI, 'qpx', 'nps1')).toMatchObject({ ok: true, profile: { name: 'qpx_nps1', maxPerGpu: 4 } });
    const cpx4 = partitionModeLayout(MI, 'CPX', 'NPS4');
    expect(cpx4.ok && cpx4.layout.map((e) => e.start)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const c of ['SPX', 'DPX', 'QPX']) {
      expect(partitionModeLayout(MI, c, 'NPS4')).toEqual({ ok: false, rule: 'incompatible_modes', message: `NPS4 on ${MI} allows only CPX (got ${c})` });
    }
    expect(partitionModeLayout(MI, 'TPX', 'NPS1')).toMatchObject({ ok: false, rule: 'unknown_compute_mode' });
    expect(partitionModeLayout(MI, 'CPX', 'NPS2')).toMatchObject({ ok: false, rule: 'unknown_memory_mode' });
    expect(partitionModeLayout('H100-80GB', 'CPX', 'NPS1')).toMatchObject({ ok: false, rule: 'not_mode_partitioned' });
    expect(migProfilesFor(MI).map((p) => p.name)).toEqual(['dpx_nps1', 'qpx_nps1', 'cpx_nps1', 'cpx_nps4']);
  });

  it('reads the modes back from a layout; a partial or mixed layout is no mode', () => {
    expect(partitionModeOf(MI, [])).toEqual({ computeMode: 'SPX', memoryMode: 'NPS1' });
    expect(partitionModeOf(MI, partitionModeLayoutOf(MI, 'cpx_nps4')!)).toEqual({ computeMode: 'CPX', memoryMode: 'NPS4' });
    expect(partitionModeOf(MI, [{ profile: 'cpx_nps4' }])).toBeUndefined();
    expect(partitionModeOf(MI, [{ profile: 'dpx_nps1' }, { profile: 'qpx_nps1' }])).toBeUndefined();
    expect(partitionModeOf('A100-80GB', [])).toBeUndefined();
    expect(partitionModeLayoutOf('A100-80GB', '1g.10gb')).toBeUndefined();
  });
});
