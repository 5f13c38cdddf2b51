import fc from 'fast-check';
import { runCycle } from './cycle';
import { Engine } from './engine';
import { CpuStrandModel, strandedMilli } from './cpu-strand';
import { FragmentationModel, fitMass } from './fragmentation';
import { ModelPressureModel } from './model-pressure';
import { PROFILES } from './profiles';
import { ShapeMix, mixDistance, type MixEntry } from './shape-mix';
import { job, node } from './testing/builders';
import type { NodeState, PendingJob, ShapeCount } from './types';

const f64 = (xs: number[]) => Float64Array.from(xs);
const count = (j: PendingJob, n: number): ShapeCount => ({ request: j.request, count: n });

describe('fitMass: probability of a group whose CPU fits', () => {
  it.each([
    { name: 'nothing fits below the smallest CPU', cpu: [4000, 8000], cum: [0.25, 0.75], cpuFree: 3999, want: 0 },
    { name: 'a threshold equal to the free CPU fits', cpu: [4000, 8000], cum: [0.25, 0.75], cpuFree: 4000, want: 0.25 },
    { name: 'between thresholds', cpu: [4000, 8000], cum: [0.25, 0.75], cpuFree: 7000, want: 0.25 },
    { name: 'everything fits above the largest', cpu: [4000, 8000], cum: [0.25, 0.75], cpuFree: 96000, want: 0.75 },
    { name: 'empty group', cpu: [], cum: [], cpuFree: 96000, want: 0 },
  ])('$name', ({ cpu, cum, cpuFree, want }) => {
    expect(fitMass(f64(cpu), f64(cum), cpuFree)).toBe(want);
  });
});

describe('strandedMilli: idle GPU the free CPU cannot feed', () => {
  it.each([
    { name: 'enough CPU: nothing stranded', idle: 2000, cpuFree: 104000, ratio: 16, want: 0 },
    { name: 'CPU feeds 4 of 8 GPUs', idle: 8000, cpuFree: 64000, ratio: 16, want: 4000 },
    { name: 'no CPU left: all idle stranded', idle: 3000, cpuFree: 0, ratio: 16, want: 3000 },
    { name: 'no idle GPU', idle: 0, cpuFree: 0, ratio: 16, want: 0 },
  ])('$name', ({ idle, cpuFree, ratio, want }) => {
    expect(strandedMilli(idle, cpuFree, ratio)).toBe(want);
  });
});

describe('CpuStrandModel.change: stranded GPU milli a placement adds', () => {
  // mix: half 1-GPU jobs with 8 cores, half CPU-only jobs with 8 cores -> 8000 CPU per 500 GPU milli = 16 per milli
  const mixFor = (e: Engine) => {
    const mix = new ShapeMix({ coverage: 1 });
    mix.add(e.mixShape(job().gpus(1).cpu(8000).build().request, 'container'), 1);
    mix.add(e.mixShape(job().cpu(8000).build().request, 'container'), 1);
    mix.refresh();
    return mix;
  };
  it.each([
    { name: 'CPU-only job on a GPU-dense node strands 0.5 GPU', node: node('a').gpus(8).cpu(96000, 64000).build(), job: job('j').cpu(8000).build(), want: 500 },
    { name: 'CPU-only job on a CPU-rich node strands nothing', node: node('b').gpus(2).cpu(104000).build(), job: job('j').cpu(8000).build(), want: 0 },
    {
      name: '1-GPU job with its share of CPU relieves a stranded node',
      node: node('a').gpus(8).cpu(96000, 64000).build(),
      job: job('j').gpus(1).cpu(8000).build(),
      want: -500,
    },
    {
      name: 'CPU-heavy 1-GPU job on a tight node strands more',
      node: node('a').gpus(8).cpu(96000, 64000).build(),
      job: job('j').gpus(1).cpu(32000).build(),
      want: 1000,
    },
    {
      name: 'share on a node with spare CPU strands nothing',
      node: node('b').gpus(2).cpu(104000).build(),
      job: job('j').share(500).cpu(4000).build(),
      want: 0,
    },
  ])('$name', ({ node: n, job: j, want }) => {
    const e = new Engine({ nodes: [n] });
    const model = new CpuStrandModel(mixFor(e));
    expect(model.cpuPerGpuMilli()).toBe(16);
    const jv = e.jobView(j);
    const nv = e.nodes[0]!;
    expect(model.change(jv, nv, e.deviceOptions(jv, nv)[0]!)).toBeCloseTo(want, 9);
  });
});

describe('FragmentationModel: grouped evaluation equals the per-shape one', () => {
  const SHARES = [0, 50, 160, 230, 320, 470, 650, 810];
  const gpuArb = fc.record({ used: fc.constantFrom(...SHARES, 1000), shared: fc.boolean(), model: fc.constantFrom('T4', 'V100') });
  const nodeArb = fc
    .record({ gpus: fc.array(gpuArb, { minLength: 1, maxLength: 8 }), cpu: fc.integer({ min: 0, max: 96 }) })
    .map(({ gpus, cpu }): NodeState => {
      const b = node('n').cpu(96000, cpu * 1000);
      gpus.forEach((g) => b.gpus(1, g.model));
      const s = b.build();
      gpus.forEach((g, i) => {
        const gs = s.gpus[i]!;
        if (g.used === 1000) gs.allocated = true;
        else if (g.used > 0 || g.shared) {
          gs.mode = 'shared';
          gs.sharedMilliUsed = g.used;
        }
      });
      return s;
    });
  const shapeArb = fc.record({
    kind: fc.constantFrom('whole', 'share', 'cpu'),
    gpus: fc.integer({ min: 1, max: 4 }),
    milli: fc.constantFrom(...SHARES.slice(1)),
    cpu: fc.constantFrom(0, 2000, 4000, 12000, 32000),
    model: fc.boolean(),
    n: fc.integer({ min: 1, max: 20 }),
  });
  const toJob = (s: { kind: string; gpus: number; milli: number; cpu: number; model: boolean }) => {
    const b = job().cpu(s.cpu);
    if (s.kind === 'whole') b.gpus(s.gpus);
    if (s.kind === 'share') b.share(s.milli);
    if (s.model && s.kind !== 'cpu') b.models('T4');
    return b.build();
  };

  it('change() agrees for every device option (property)', () => {
    fc.assert(
      fc.property(nodeArb, fc.array(shapeArb, { minLength: 1, maxLength: 12 }), shapeArb, (n, shapes, placed) => {
        const e = new Engine({ nodes: [n] });
        const mix = new ShapeMix({ coverage: 1 });
        for (const s of shapes) mix.add(e.mixShape(toJob(s).request, 'container'), s.n);
        mix.refresh();
        const plain = new FragmentationModel(mix, 'plain');
        const grouped = new FragmentationModel(mix, 'grouped', false, true);
        const jv = e.jobView(toJob(placed));
        const nv = e.nodes[0]!;
        for (const o of e.deviceOptions(jv, nv)) {
          if (jv.cpu > nv.cpuFree) continue;
          expect(grouped.change(jv, nv, o)).toBeCloseTo(plain.change(jv, nv, o), 6);
          expect(grouped.delta(jv, nv, o).before).toBeCloseTo(plain.delta(jv, nv, o).before, 6);
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('gantry profile: CPU stranding and the learned mix', () => {
  // a GPU-dense node with 12 cores per GPU and a CPU-rich node with 52 cores per GPU
  const dense = () => node('dense').gpus(8, 'G2').cpu(96000).build();
  const rich = () => node('rich').gpus(2, 'T4').cpu(104000).build();
  const history = [count(job().gpus(1).cpu(12000).build(), 100), count(job().share(500).cpu(4000).build(), 50)];

  it.each([
    { name: 'CPU-only job goes to the CPU-rich node (no GPU stranded)', job: job('j').cpu(32000).build(), wantNode: 'rich' },
    { name: 'CPU-heavy 1-GPU job goes to the CPU-rich node', job: job('j').gpus(1).cpu(24000).build(), wantNode: 'rich' },
    {
      name: 'a 1-GPU job with its share of CPU still packs by fragmentation (node order breaks the tie)',
      job: job('j').gpus(1).cpu(12000).build(),
      wantNode: 'dense',
    },
  ])('$name', ({ job: j, wantNode }) => {
    const d = runCycle({ nodes: [dense(), rich()] }, [j], { history });
    expect(d.placed.map((p) => p.replicas[0]!.nodeId)).toEqual([wantNode]);
  });

  it.each([
    { name: 'gantry keeps the whole learned mix', profile: 'gantry', mix: undefined, wantCoverage: 1 },
    { name: 'engine options override the profile', profile: 'gantry', mix: { coverage: 0.9 }, wantCoverage: 0.9 },
    { name: 'an undefined override keeps the profile value', profile: 'gantry', mix: { coverage: undefined }, wantCoverage: 1 },
    { name: 'fgd keeps the 95% default', profile: 'fgd', mix: undefined, wantCoverage: 0.95 },
  ])('$name', ({ profile, mix, wantCoverage }) => {
    expect(new Engine({ nodes: [] }, { profile, mix }).mix.coverage).toBe(wantCoverage);
  });

  it('the gantry profile weighs CPU stranding inside the fragmentation score', () => {
    expect(PROFILES.gantry!.score.find((s) => s.name === 'fragmentation')!.args).toMatchObject({ quantum: 0.1, strand: 0.2 });
  });

  it.each([
    { name: 'folded-in strand equals the separate cpu-strand plugin', inline: { quantum: 0.1, strand: 0.2 }, separate: [{ name: 'cpu-strand', weight: 0.2 }] },
  ])('$name', ({ inline, separate }) => {
    const snap = () => ({
      nodes: [
        node('dense').gpus(8, 'G2').cpu(96000).build(),
        node('rich').gpus(2, 'T4').cpu(104000).build(),
        node('mid').gpus(4, 'T4').cpu(96000, 40000).allocated(0).build(),
      ],
    });
    const jobs = [job('a').cpu(32000).build(), job('b').gpus(1).cpu(24000).build(), job('c').share(470).cpu(8000).build(), job('d').gpus(2).cpu(4000).build()];
    const base = PROFILES.gantry!;
    const withInline = { ...base, name: 'inline', score: [{ name: 'fragmentation', weight: 1, args: inline }, ...base.score.slice(1)] };
    const withPlugin = { ...base, name: 'plugin', score: [{ name: 'fragmentation', weight: 1, args: { quantum: 0.1 } }, ...base.score.slice(1), ...separate] };
    const e1 = new Engine(snap(), { profile: withInline, history });
    const e2 = new Engine(snap(), { profile: withPlugin, history });
    const wantSame = jobs.map((j) => e2.submit(j).replicas);
    expect(jobs.map((j) => e1.submit(j).replicas)).toEqual(wantSame);
  });
});

describe('ShapeMix: total-variation distance and refresh hysteresis', () => {
  const entry = (key: string, p: number) => ({ key, p }) as MixEntry;
  it.each([
    { name: 'same mix', a: [entry('x', 0.5), entry('y', 0.5)], b: [entry('x', 0.5), entry('y', 0.5)], want: 0 },
    { name: 'mass moved between shapes', a: [entry('x', 0.5), entry('y', 0.5)], b: [entry('x', 0.6), entry('y', 0.4)], want: 0.1 },
    { name: 'new shape appears', a: [entry('x', 1)], b: [entry('x', 0.9), entry('z', 0.1)], want: 0.1 },
    { name: 'disjoint mixes', a: [entry('x', 1)], b: [entry('y', 1)], want: 1 },
  ])('$name', ({ a, b, want }) => {
    expect(mixDistance(a, b)).toBeCloseTo(want, 12);
  });

  it.each([
    // first 10 jobs of shape A publish version 1; then 1 job of B moves the mix by 1/11 (0.09)
    { name: 'no hysteresis: every scheduled refresh publishes', minChange: 0, wantVersion: 2 },
    { name: 'a move below minChange keeps the published mix', minChange: 0.1, wantVersion: 1 },
    { name: 'a move above minChange publishes', minChange: 0.05, wantVersion: 2 },
  ])('$name', ({ minChange, wantVersion }) => {
    const e = new Engine({ nodes: [] });
    const mix = new ShapeMix({ coverage: 1, minChange, refreshStep: 1, growth: 1 });
    mix.add(e.mixShape(job().gpus(1).build().request, 'container'), 10);
    mix.sync();
    mix.add(e.mixShape(job().share(500).build().request, 'container'), 1);
    mix.sync();
    expect(mix.version).toBe(wantVersion);
  });

  it('refresh() called directly always publishes', () => {
    const e = new Engine({ nodes: [] });
    const mix = new ShapeMix({ coverage: 1, minChange: 0.5 });
    mix.add(e.mixShape(job().gpus(1).build().request, 'container'), 10);
    mix.refresh();
    mix.add(e.mixShape(job().share(500).build().request, 'container'), 1);
    mix.refresh();
    expect(mix.version).toBe(2);
  });
});

describe('model pressure: pinned demand keeps its GPU model', () => {
  const t4 = () => node('t4').gpus(2, 'T4').cpu(104000);
  const g2 = () => node('g2').gpus(8, 'G2').cpu(96000);
  const mixOf = (shapes: ShapeCount[]) => {
    const e = new Engine({ nodes: [t4().build(), g2().build()] }, { history: shapes });
    e.mix.refresh();
    return new ModelPressureModel(e.mix, e);
  };

  it.each([
    {
      name: 'half the jobs pinned to T4 (a fifth of the GPUs): T4 capacity is all needed, G2 none',
      history: [count(job().gpus(1).models('T4').build(), 50), count(job().gpus(1).build(), 50)],
      want: { T4: 1, G2: 0 },
    },
    {
      name: 'a twentieth pinned to T4: a quarter of T4 capacity is needed',
      history: [count(job().gpus(1).models('T4').build(), 5), count(job().gpus(1).build(), 95)],
      want: { T4: 0.25, G2: 0 },
    },
    {
      name: 'pinned to either model: the load is split by free capacity, pressure equal',
      history: [count(job().gpus(1).models('T4', 'G2').build(), 10), count(job().gpus(1).build(), 90)],
      want: { T4: 0.1, G2: 0.1 },
    },
    { name: 'nothing pinned: no pressure anywhere', history: [count(job().gpus(1).build(), 10), count(job().share(500).build(), 10)], want: { T4: 0, G2: 0 } },
  ])('$name', ({ history, want }) => {
    const m = mixOf(history);
    expect(m.of('T4')).toBeCloseTo(want.T4, 6);
    expect(m.of('G2')).toBeCloseTo(want.G2, 6);
  });

  it('an unpinned job leaves the pressured model to the jobs pinned to it; the pinned job still goes there', () => {
    const history = [count(job().gpus(1).models('T4').cpu(8000).build(), 40), count(job().gpus(1).cpu(8000).build(), 60)];
    const free = job('free').gpus(1).cpu(24000).build();
    expect(runCycle({ nodes: [t4().build(), g2().build()] }, [free], { history, profile: undefined }).placed[0]!.replicas[0]!.nodeId).toBe('g2');
    const pinned = job('pinned').gpus(1).models('T4').cpu(8000).build();
    expect(runCycle({ nodes: [t4().build(), g2().build()] }, [pinned], { history }).placed[0]!.replicas[0]!.nodeId).toBe('t4');
  });

  // a twentieth of the jobs pinned to T4: on the empty cluster a quarter of T4's free capacity is needed
  const twentieth = [count(job().gpus(1).models('T4').build(), 5), count(job().gpus(1).build(), 95)];

  it.each([
    { name: 'T4 half full, G2 empty: the pinned work to come needs more of what is left on T4', t4Used: [0], g2Used: [], want: 0.45 },
    { name: 'T4 empty, G2 three quarters full: less work to come, all of T4 free', t4Used: [], g2Used: [0, 1, 2, 3, 4, 5], want: 0.1 },
    { name: 'T4 full: whatever frees up there is needed', t4Used: [0, 1], g2Used: [], want: 1 },
  ])('pressure follows what is free: $name', ({ t4Used, g2Used, want }) => {
    const e = new Engine(
      {
        nodes: [
          t4()
            .allocated(...t4Used)
            .build(),
          g2()
            .allocated(...g2Used)
            .build(),
        ],
      },
      { history: twentieth },
    );
    e.mix.refresh();
    expect(new ModelPressureModel(e.mix, e).of('T4')).toBeCloseTo(want, 6);
  });

  it('re-reads free capacity every `every` placements and republishes only a change of at least minChange', () => {
    const e = new Engine({ nodes: [t4().build(), g2().build()] }, { history: twentieth });
    e.mix.refresh();
    const every = new ModelPressureModel(e.mix, e, { every: 2, minChange: 0.05 });
    const coarse = new ModelPressureModel(e.mix, e, { every: 2, minChange: 0.5 });
    const v0 = [every.epoch(), coarse.epoch()];
    expect(every.of('T4')).toBeCloseTo(0.25, 6);
    // six unpinned jobs fill G2 (T4 is kept for the pinned work): 4 GPUs free, all of T4
    for (let i = 0; i < 6; i++) expect(e.place(job().gpus(1).build()).replicas[0]!.nodeId).toBe('g2');
    expect(every.epoch()).toBe(v0[0]); // first call of the two: not re-read yet
    expect(every.epoch()).toBe(v0[0]! + 1);
    expect(every.of('T4')).toBeCloseTo(0.1, 6);
    coarse.epoch();
    expect(coarse.epoch()).toBe(v0[1]);
    expect(coarse.of('T4')).toBeCloseTo(0.25, 6);
  });

  it('nothing pinned: the free capacity is never read and the version never moves', () => {
    const e = new Engine({ nodes: [t4().build(), g2().build()] }, { history: [count(job().gpus(1).build(), 10)] });
    e.mix.refresh();
    const m = new ModelPressureModel(e.mix, e, { every: 1 });
    const v = m.epoch();
    e.place(job().gpus(1).build());
    expect(m.epoch()).toBe(v);
    expect(m.of('G2')).toBe(0);
  });

  it('the gantry profile charges displaced pinned work at one GPU per GPU, re-read from free capacity', () => {
    expect(PROFILES.gantry!.score.find((s) => s.name === 'fragmentation')!.args).toMatchObject({ pressure: 1, pressureEvery: 64, pressureMinChange: 0.05 });
  });
});
