/**
 * `bench openb-grid`: a grid of trace variants (openb-variants.ts) x variant seeds x policies,
 * each replayed over the replay seeds under the FGD protocol; prints a Markdown table (the one in
 * docs/benchmarks.md) and, last, one JSON line with every cell.
 */
import { resolve } from 'node:path';
import { loadNodes, loadPods, runOnce, type OpenbNode, type OpenbPod, type Policy } from './openb';
import { makeVariant, parseVariant, specTable } from './openb-variants';

export interface GridCell {
  variant: string;
  traceSeed: number;
  policy: Policy;
  /** Mean and sd over the replay seeds of the unallocated GPU % at 100% arrived. */
  unallocatedPctAt100: number;
  sd: number;
  /** One value per replay seed, in seed order. */
  perSeed: number[];
  pods: number;
  podsPerSecond: number;
  podsPerCpuSecond: number;
}

export interface GridOptions {
  dataDir: string;
  variants: string[];
  traceSeeds: number[];
  seeds: number[];
  policies: Policy[];
}

export function runGrid(o: GridOptions, log?: (s: string) => void): GridCell[] {
  const nodes = loadNodes(resolve(o.dataDir, 'openb_node_list_gpu_node.csv'));
  const base = loadPods(resolve(o.dataDir, 'openb_pod_list_default.csv'));
  const table = specTable(loadPods(resolve(o.dataDir, 'openb_pod_list_gpuspec10.csv')));
  const cells: GridCell[] = [];
  for (const variant of o.variants) {
    const spec = parseVariant(variant);
    for (const traceSeed of o.traceSeeds) {
      const pods = makeVariant(base, spec, traceSeed, table, nodes);
      for (const policy of o.policies) {
        const cell = replay(nodes, pods, variant, traceSeed, policy, o.seeds);
        log?.(`${variant} s${traceSeed} ${policy}: ${cell.unallocatedPctAt100.toFixed(3)} (${cell.perSeed.map((x) => x.toFixed(2)).join(' ')})`);
        cells.push(cell);
      }
    }
  }
  return cells;
}

function replay(nodes: OpenbNode[], pods: OpenbPod[], variant: string, traceSeed: number, policy: Policy, seeds: number[]): GridCell {
  const runs = seeds.map((seed) => runOnce(nodes, pods, policy, seed));
  const perSeed = runs.map((r) => round3(r.unallocatedPctAt100));
  const m = perSeed.reduce((a, b) => a + b, 0) / perSeed.length;
  const sd = perSeed.length > 1 ? Math.sqrt(perSeed.reduce((a, b) => a + (b - m) ** 2, 0) / (perSeed.length - 1)) : 0;
  const n = runs.reduce((a, r) => a + r.pods, 0);
  return {
    variant,
    traceSeed,
    policy,
    unallocatedPctAt100: round3(m),
    sd: round3(sd),
    perSeed,
    pods: pods.length,
    podsPerSecond: Math.round(n / runs.reduce((a, r) => a + r.seconds, 0)),
    podsPerCpuSecond: Math.round(n / runs.reduce((a, r) => a + r.cpuSeconds, 0)),
  };
}

/** The grid as a Markdown table: one row per variant and variant seed, one column per policy, then gantry - fgd. */
export function gridTable(cells: GridCell[]): string {
  const policies = [...new Set(cells.map((c) => c.policy))];
  const rows = new Map<string, GridCell[]>();
  for (const c of cells) {
    const k = `${c.variant}|${c.traceSeed}`;
    rows.set(k, [...(rows.get(k) ?? []), c]);
  }
  const both = policies.includes('gantry') && policies.includes('fgd');
  const head = `| variant | seed | ${policies.join(' | ')} |${both ? ' gantry - fgd | seeds gantry <= fgd |' : ''}`;
  const sep = `|---|---|${policies.map(() => '---|').join('')}${both ? '---|---|' : ''}`;
  const lines = [...rows.values()].map((cs) => {
    const by = new Map(cs.map((c) => [c.policy, c]));
    let line = `| ${cs[0]!.variant} | ${cs[0]!.traceSeed} | ${policies.map((p) => (by.has(p) ? `${by.get(p)!.unallocatedPctAt100.toFixed(2)} ± ${by.get(p)!.sd.toFixed(2)}` : '')).join(' | ')} |`;
    if (both) {
      const g = by.get('gantry')!;
      const f = by.get('fgd')!;
      const wins = g.perSeed.filter((x, i) => x <= f.perSeed[i]!).length;
      line += ` ${(g.unallocatedPctAt100 - f.unallocatedPctAt100).toFixed(2)} | ${wins}/${g.perSeed.length} |`;
    }
    return line;
  });
  return [head, sep, ...lines].join('\n');
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
