import { join } from 'node:path';
import { loadNodes, loadPods, runOnce, toNodeState, toPendingJob, traceShapes, workload, type OpenbPod } from './openb';
import { Rng } from './rng';
import { parseSeeds } from './seeds';

const DATA = join(__dirname, '../data/openb');
const pod = (p: Partial<OpenbPod>): OpenbPod => ({ name: 'p', cpu: 1000, mem: 1024, numGpu: 1, milli: 1000, spec: [], ...p });

describe('openb adapter', () => {
  it.each([
    { name: 'CPU-only pod has no GPU request', pod: pod({ numGpu: 0, milli: 0 }), wantRequest: { cpuMilli: 1000, memoryMiB: 1024 } },
    { name: 'fractional pod becomes a share in thousandths', pod: pod({ milli: 460 }), wantRequest: { cpuMilli: 1000, memoryMiB: 1024, gpuMilli: 460 } },
    { name: 'multi-GPU pod takes whole GPUs', pod: pod({ numGpu: 4 }), wantRequest: { cpuMilli: 1000, memoryMiB: 1024, gpus: 4 } },
    {
      name: 'gpu_spec becomes the allowed model set',
      pod: pod({ spec: ['V100M16', 'V100M32'] }),
      wantRequest: { cpuMilli: 1000, memoryMiB: 1024, gpus: 1, gpuModels: ['V100M16', 'V100M32'] },
    },
  ])('$name', ({ pod: p, wantRequest }) => {
    expect(toPendingJob(p, 0).request).toEqual(wantRequest);
  });

  it('node becomes a NodeState with whole GPUs of its model', () => {
    const n = toNodeState({ sn: 'n1', cpu: 96000, mem: 393216, gpus: 8, model: 'G2' });
    expect(n.gpus).toHaveLength(8);
    expect(new Set(n.gpus.map((g) => g.model))).toEqual(new Set(['G2']));
    expect(n.cpuMilliFree).toBe(96000);
  });
});

describe('openb protocol', () => {
  const nodes = loadNodes(join(DATA, 'openb_node_list_gpu_node.csv'));
  const pods = loadPods(join(DATA, 'openb_pod_list_default.csv'));

  it('reads the published cluster and trace', () => {
    expect(nodes).toHaveLength(1213);
    expect(nodes.reduce((a, n) => a + n.gpus, 0)).toBe(6212);
    expect(pods).toHaveLength(8152);
    expect(pods[0]!.name < pods[1]!.name).toBe(true);
  });

  it('inflates to 130% of capacity by appending sampled pods after the shuffle', () => {
    const w = workload(pods, 6_212_000, new Rng(42));
    const original = pods.reduce((a, p) => a + p.numGpu * p.milli, 0);
    const appended = w.slice(pods.length).reduce((a, p) => a + p.milli, 0);
    expect(w.length).toBeGreaterThan(pods.length);
    expect(original + appended).toBeLessThanOrEqual(1.3 * 6_212_000);
    expect(new Set(w.slice(0, pods.length).map((p) => p.name)).size).toBe(pods.length);
  });

  it('typical shapes ignore memory and count CPU-only pods', () => {
    const shapes = traceShapes(pods);
    expect(shapes.reduce((a, s) => a + s.count, 0)).toBe(pods.length);
    expect(shapes.some((s) => s.request.gpus === undefined && s.request.gpuMilli === undefined)).toBe(true);
  });

  it.each([['best-fit'], ['gantry']] as const)('%s replay is deterministic for a seed', (policy) => {
    const small = pods.slice(0, 1500);
    const a = runOnce(nodes, small, policy, 42);
    const b = runOnce(nodes, small, policy, 42);
    expect(a.allocPctAt).toEqual(b.allocPctAt);
  });

  it('parses seed ranges', () => {
    expect(parseSeeds('42-45,50')).toEqual([42, 43, 44, 45, 50]);
  });
});
