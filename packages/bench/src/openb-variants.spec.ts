import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNodes, loadPods, type OpenbPod } from './openb';
import { gridTable, type GridCell } from './openb-grid';
import { makeVariant, parseVariant, podKind, specTable, variantCsv } from './openb-variants';

const DATA = join(__dirname, '../data/openb');
const nodes = loadNodes(join(DATA, 'openb_node_list_gpu_node.csv'));
const base = loadPods(join(DATA, 'openb_pod_list_default.csv'));
const pinned = loadPods(join(DATA, 'openb_pod_list_gpuspec10.csv'));
const table = specTable(pinned);
const demand = (ps: OpenbPod[], f: (p: OpenbPod) => boolean) => ps.filter(f).reduce((s, p) => s + p.numGpu * p.milli, 0);
const gpuDemand = (ps: OpenbPod[]) => demand(ps, () => true);

describe('openb trace variants', () => {
  it('parses variant names and refuses unknown parts or 100% and more', () => {
    expect(parseVariant('gpuspec25+multigpu30')).toEqual({ gpuspec: 0.25, multigpu: 0.3 });
    expect(parseVariant('cpu050')).toEqual({ cpu: 0.05 });
    expect(() => parseVariant('gpuspec')).toThrow(/unknown trace variant part "gpuspec"/);
    expect(() => parseVariant('gpushare100')).toThrow(/below 100%/);
  });

  it('learns the constraints per kind of pod from the pinned trace (shares only on T4, P100 or a broad set)', () => {
    expect(table.share.map((e) => e.spec.join('|')).sort()).toEqual(['G2|P100|T4|V100M16|V100M32', 'P100', 'T4']);
    expect(table.whole.reduce((s, e) => s + e.count, 0) + table.share.reduce((s, e) => s + e.count, 0) + table.multi.reduce((s, e) => s + e.count, 0)).toBe(
      732,
    );
  });

  it('gpuspec25 pins a quarter of the GPU pods, only the constraint changes, and multi-GPU pods get a model with nodes that large', () => {
    const v = makeVariant(base, parseVariant('gpuspec25'), 1, table, nodes);
    expect(v).toHaveLength(base.length);
    const gpu = v.filter((p) => podKind(p) !== 'cpu');
    expect(gpu.filter((p) => p.spec.length > 0).length).toBe(Math.round(0.25 * gpu.length));
    expect(v.map(({ spec: _s, ...rest }) => rest)).toEqual(base.map(({ spec: _s, ...rest }) => rest));
    expect(v.filter((p) => podKind(p) === 'cpu').every((p) => p.spec.length === 0)).toBe(true);
    const maxGpus = new Map<string, number>();
    for (const n of nodes) maxGpus.set(n.model, Math.max(maxGpus.get(n.model) ?? 0, n.gpus));
    for (const p of v.filter((q) => q.spec.length > 0)) expect(p.spec.some((m) => (maxGpus.get(m) ?? 0) >= p.numGpu)).toBe(true);
    // the kinds keep the pinned trace's model mix: T4 is the most common constraint of shares
    const shareSpecs = v.filter((p) => podKind(p) === 'share' && p.spec.length).map((p) => p.spec.join('|'));
    expect(shareSpecs.filter((s) => s === 'T4').length).toBeGreaterThan(shareSpecs.filter((s) => s === 'P100').length);
  });

  it('is deterministic for a seed and differs between seeds', () => {
    const a = variantCsv(makeVariant(base, parseVariant('gpuspec20+multigpu30'), 7, table, nodes));
    expect(variantCsv(makeVariant(base, parseVariant('gpuspec20+multigpu30'), 7, table, nodes))).toBe(a);
    expect(variantCsv(makeVariant(base, parseVariant('gpuspec20+multigpu30'), 8, table, nodes))).not.toBe(a);
  });

  it('multigpu40 adds multi-GPU pods of the default trace until they are 40% of GPU demand', () => {
    const v = makeVariant(base, parseVariant('multigpu40'), 1, table, nodes);
    const share = demand(v, (p) => podKind(p) === 'multi') / gpuDemand(v);
    expect(share).toBeGreaterThanOrEqual(0.4);
    expect(share).toBeLessThan(0.41);
    expect(v.filter((p) => podKind(p) !== 'multi')).toHaveLength(base.filter((p) => podKind(p) !== 'multi').length);
    const shapes = new Set(base.map((p) => `${p.cpu}|${p.mem}|${p.numGpu}|${p.milli}`));
    expect(v.every((p) => shapes.has(`${p.cpu}|${p.mem}|${p.numGpu}|${p.milli}`))).toBe(true);
    expect(new Set(v.map((p) => p.name)).size).toBe(v.length);
  });

  it('gpushare60 replaces whole-GPU pods by shares (same pod count); cpu200 and cpu050 set the CPU-only share of pods', () => {
    const s = makeVariant(base, parseVariant('gpushare60'), 1, table, nodes);
    expect(s).toHaveLength(base.length);
    expect(demand(s, (p) => podKind(p) === 'share') / gpuDemand(s)).toBeGreaterThanOrEqual(0.6);
    expect(demand(s, (p) => podKind(p) === 'share') / gpuDemand(s)).toBeLessThan(0.61);
    for (const [name, want] of [
      ['cpu200', 0.2],
      ['cpu050', 0.05],
    ] as const) {
      const c = makeVariant(base, parseVariant(name), 1, table, nodes);
      expect(Math.abs(c.filter((p) => podKind(p) === 'cpu').length / c.length - want)).toBeLessThan(0.001);
      expect(gpuDemand(c)).toBe(gpuDemand(base));
    }
  });

  it('writes a CSV the replay reads back as the same pods', () => {
    const v = makeVariant(base, parseVariant('gpuspec33'), 3, table, nodes);
    const file = join(tmpdir(), `gantry-variant-${process.pid}.csv`);
    writeFileSync(file, variantCsv(v));
    expect(loadPods(file)).toEqual(v);
  });
});

describe('openb grid table', () => {
  const cell = (policy: 'gantry' | 'fgd', perSeed: number[]): GridCell => ({
    variant: 'gpuspec25',
    traceSeed: 1,
    policy,
    unallocatedPctAt100: perSeed.reduce((a, b) => a + b, 0) / perSeed.length,
    sd: 0.1,
    perSeed,
    pods: 8152,
    podsPerSecond: 1,
    podsPerCpuSecond: 1,
  });
  it('shows gantry - fgd and on how many seeds gantry was at or below fgd', () => {
    const t = gridTable([cell('gantry', [5, 6]), cell('fgd', [5.5, 5.5])]);
    expect(t.split('\n')[2]).toBe('| gpuspec25 | 1 | 5.50 ± 0.10 | 5.50 ± 0.10 | 0.00 | 1/2 |');
  });
});
