/**
 * Trace variants of the openb default trace, made the way the published variants were
 * (docs/openb.md, "Trace variants"): from the default trace, with a seeded PRNG, in memory.
 *
 *   gpuspec<P>   P% of GPU pods carry a GPU-model constraint, drawn from the constraints of the
 *                published pinned trace (gpuspec10) for the same kind of pod: a share of one GPU,
 *                one whole GPU, or several GPUs (then only constraints whose models have a node
 *                with that many GPUs)
 *   multigpu<P>  multi-GPU pods are P% of GPU demand: multi-GPU pods of the default trace are
 *                drawn with replacement and added (as the published multigpu20)
 *   gpushare<P>  GPU shares are P% of GPU demand: random whole-GPU pods are replaced by shares
 *                drawn from the default trace, pod count unchanged (as the published gpushare40)
 *   cpu<P>       CPU-only pods are P/10 % of pods (cpu050 = 5%, as published; the default has
 *                13.3%): CPU-only pods are drawn and added, or random ones removed
 *
 * A variant name joins parts with '+', e.g. `gpuspec25`, `gpuspec25+multigpu30`. Parts apply in
 * the order cpu, gpushare, multigpu, gpuspec (constraints last, so added pods get them too).
 */
import type { OpenbNode, OpenbPod } from './openb';
import { Rng } from './rng';

export type PodKind = 'cpu' | 'share' | 'whole' | 'multi';

export function podKind(p: OpenbPod): PodKind {
  if (p.numGpu === 0) return 'cpu';
  if (p.milli < 1000) return 'share';
  return p.numGpu === 1 ? 'whole' : 'multi';
}

export interface VariantSpec {
  /** Share of GPU pods with a model constraint (0..1). */
  gpuspec?: number;
  /** Multi-GPU pods' share of GPU demand (0..1). */
  multigpu?: number;
  /** Shares' share of GPU demand (0..1). */
  gpushare?: number;
  /** CPU-only pods' share of pods (0..1). */
  cpu?: number;
}

/** 'gpuspec25+multigpu30' -> { gpuspec: 0.25, multigpu: 0.3 }; throws on an unknown part. */
export function parseVariant(name: string): VariantSpec {
  const spec: VariantSpec = {};
  for (const part of name.split('+')) {
    const m = /^(gpuspec|multigpu|gpushare|cpu)(\d+)$/.exec(part.trim());
    if (!m) throw new Error(`unknown trace variant part "${part}" (gpuspec<P>, multigpu<P>, gpushare<P>, cpu<P>, joined by +)`);
    const v = Number(m[2]);
    if (m[1] === 'cpu') spec.cpu = v / 1000;
    else spec[m[1] as 'gpuspec' | 'multigpu' | 'gpushare'] = v / 100;
  }
  for (const [k, v] of Object.entries(spec)) if (!(v >= 0 && v < 1)) throw new Error(`trace variant ${k} must be below 100%, got ${v * 100}%`);
  return spec;
}

/** Model constraints per pod kind, with their counts (from a pinned trace). */
export type SpecTable = Record<Exclude<PodKind, 'cpu'>, { spec: string[]; count: number }[]>;

/** The constraints of a pinned trace, counted per kind of GPU pod. */
export function specTable(pinned: OpenbPod[]): SpecTable {
  const t: Record<string, Map<string, { spec: string[]; count: number }>> = { share: new Map(), whole: new Map(), multi: new Map() };
  for (const p of pinned) {
    const k = podKind(p);
    if (k === 'cpu' || p.spec.length === 0) continue;
    const key = p.spec.join('|');
    const e = t[k]!.get(key);
    if (e) e.count++;
    else t[k]!.set(key, { spec: p.spec, count: 1 });
  }
  const sorted = (m: Map<string, { spec: string[]; count: number }>) => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, v]) => v);
  return { share: sorted(t.share!), whole: sorted(t.whole!), multi: sorted(t.multi!) };
}

const demand = (p: OpenbPod) => p.numGpu * p.milli;

function draw<T>(items: { count: number; v: T }[], rng: Rng): T | undefined {
  const total = items.reduce((s, i) => s + i.count, 0);
  if (total === 0) return undefined;
  let x = rng.next() * total;
  for (const i of items) {
    x -= i.count;
    if (x < 0) return i.v;
  }
  return items[items.length - 1]!.v;
}

/**
 * Makes a variant of `base` (name-sorted pods): see the file comment. `table` gives the model
 * constraints to draw from, `nodes` which constraints a multi-GPU pod can satisfy at all.
 */
export function makeVariant(base: OpenbPod[], spec: VariantSpec, seed: number, table: SpecTable, nodes: OpenbNode[]): OpenbPod[] {
  const rng = new Rng(seed);
  let pods = base.map((p) => ({ ...p, spec: [...p.spec] }));
  let next = pods.length;
  const fresh = (p: OpenbPod): OpenbPod => ({ ...p, spec: [...p.spec], name: `openb-pod-${String(next++).padStart(4, '0')}` });
  const pool = (k: PodKind) => base.filter((p) => podKind(p) === k);

  if (spec.cpu !== undefined) {
    const cpuPods = pool('cpu');
    const idx = pods.flatMap((p, i) => (podKind(p) === 'cpu' ? [i] : []));
    const drop = new Set<number>();
    let n = idx.length;
    while (n > 0 && n / (pods.length - drop.size) > spec.cpu) {
      const k = rng.int(idx.length);
      drop.add(idx[k]!);
      idx[k] = idx[idx.length - 1]!;
      idx.pop();
      n--;
    }
    if (drop.size) pods = pods.filter((_, i) => !drop.has(i));
    while (cpuPods.length && (n + 1) / (pods.length + 1) <= spec.cpu) {
      pods.push(fresh(cpuPods[rng.int(cpuPods.length)]!));
      n++;
    }
  }
  if (spec.gpushare !== undefined) {
    const shares = pool('share');
    const whole = pods.flatMap((p, i) => (podKind(p) === 'whole' || podKind(p) === 'multi' ? [i] : []));
    let total = pods.reduce((s, p) => s + demand(p), 0);
    let shared = pods.reduce((s, p) => s + (podKind(p) === 'share' ? demand(p) : 0), 0);
    while (shares.length && whole.length && shared / total < spec.gpushare) {
      const k = rng.int(whole.length);
      const i = whole[k]!;
      whole[k] = whole[whole.length - 1]!;
      whole.pop();
      const p = { ...shares[rng.int(shares.length)]!, spec: [], name: pods[i]!.name };
      total += demand(p) - demand(pods[i]!);
      shared += demand(p);
      pods[i] = p;
    }
  }
  if (spec.multigpu !== undefined) {
    const multi = pool('multi');
    let total = pods.reduce((s, p) => s + demand(p), 0);
    let m = pods.reduce((s, p) => s + (podKind(p) === 'multi' ? demand(p) : 0), 0);
    while (multi.length && m / total < spec.multigpu) {
      const p = fresh(multi[rng.int(multi.length)]!);
      pods.push(p);
      m += demand(p);
      total += demand(p);
    }
  }
  if (spec.gpuspec !== undefined) {
    const maxGpus = new Map<string, number>();
    for (const n of nodes) maxGpus.set(n.model, Math.max(maxGpus.get(n.model) ?? 0, n.gpus));
    const free = pods.flatMap((p, i) => (podKind(p) !== 'cpu' && p.spec.length === 0 ? [i] : []));
    const gpuPods = pods.filter((p) => podKind(p) !== 'cpu').length;
    const want = Math.round(spec.gpuspec * gpuPods) - (gpuPods - free.length);
    rng.shuffle(free);
    for (const i of free.slice(0, Math.max(0, want))) {
      const p = pods[i]!;
      const k = podKind(p) as Exclude<PodKind, 'cpu'>;
      const options = table[k].filter((o) => o.spec.some((m) => (maxGpus.get(m) ?? 0) >= p.numGpu)).map((o) => ({ count: o.count, v: o.spec }));
      const s = draw(options, rng);
      if (s) pods[i] = { ...p, spec: [...s] };
    }
  }
  pods = pods.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return pods;
}

/** The variant as a pod-list CSV (the columns the replay reads). */
export function variantCsv(pods: OpenbPod[]): string {
  const rows = pods.map((p) => `${p.name},${p.cpu},${p.mem},${p.numGpu},${p.milli},${p.spec.join('|')}`);
  return ['name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec', ...rows].join('\n') + '\n';
}
