/**
 * Replay of the Alibaba openb trace under the FGD protocol (docs/openb.md):
 * arrivals only, one attempt per pod, name-sorted then seeded shuffle, inflation to 130% of
 * GPU capacity by sampling with replacement, allocation recorded against arrived demand.
 */
import { readFileSync } from 'node:fs';
import { Engine, PROFILES, type ClusterSnapshot, type NodeState, type PendingJob, type Profile, type ShapeCount } from '@gantry/scheduler';
import { nodeState } from '@gantry/planner';
import { Rng } from './rng';

export interface OpenbNode {
  sn: string;
  cpu: number;
  mem: number;
  gpus: number;
  model: string;
}
export interface OpenbPod {
  name: string;
  cpu: number;
  mem: number;
  numGpu: number;
  milli: number;
  spec: string[];
}

function csv(path: string): Record<string, string>[] {
  const lines = readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.length > 0);
  const head = lines[0]!.split(',');
  return lines.slice(1).map((l) => {
    const cells = l.split(',');
    const row: Record<string, string> = {};
    head.forEach((h, i) => (row[h] = cells[i] ?? ''));
    return row;
  });
}

export function loadNodes(path: string): OpenbNode[] {
  return csv(path).map((r) => ({ sn: r.sn!, cpu: Number(r.cpu_milli), mem: Number(r.memory_mib), gpus: Number(r.gpu), model: r.model! }));
}

export function loadPods(path: string): OpenbPod[] {
  return csv(path)
    .map((r) => ({
      name: r.name!,
      cpu: Number(r.cpu_milli),
      mem: Number(r.memory_mib),
      numGpu: Number(r.num_gpu),
      milli: Number(r.gpu_milli),
      spec: r.gpu_spec ? r.gpu_spec.split('|').filter(Boolean) : [],
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// ------------------------------------------------------------------ adapter (openb -> engine types)

/** An empty openb node as the engine sees it (the planner's replay builds the same). */
export function toNodeState(n: OpenbNode): NodeState {
  return nodeState({ id: n.sn, model: n.model, gpus: n.gpus, cpuMilli: n.cpu, memoryMiB: n.mem });
}

export function toPendingJob(p: OpenbPod, seq: number): PendingJob {
  const request: PendingJob['request'] = { cpuMilli: p.cpu, memoryMiB: p.mem };
  if (p.numGpu > 0 && p.milli >= 1000) request.gpus = p.numGpu;
  else if (p.numGpu > 0 && p.milli > 0) request.gpuMilli = p.milli;
  if (p.spec.length) request.gpuModels = p.spec;
  return { id: `${p.name}#${seq}`, teamId: 'openb', priority: 0, createdAtMs: seq, replicas: 1, request, topology: { level: 'any', required: false } };
}

// ------------------------------------------------------------------ protocol

export function workload(pods: OpenbPod[], capacityMilli: number, rng: Rng): OpenbPod[] {
  const order = rng.shuffle([...pods]);
  const target = 1.3 * capacityMilli;
  let total = pods.reduce((s, p) => s + p.numGpu * p.milli, 0);
  if (total > target) {
    while (total > target) {
      const i = rng.int(order.length);
      const [p] = order.splice(i, 1);
      total -= p!.numGpu * p!.milli;
    }
    return order;
  }
  for (;;) {
    const p = pods[rng.int(pods.length)]!;
    if (total + p.milli > target) break;
    order.push(p);
    total += p.milli;
  }
  return order;
}

/** The paper's typical shapes input: counts of (cpu, gpu milli, num gpu, spec) over the original trace. */
export function traceShapes(pods: OpenbPod[]): ShapeCount[] {
  const m = new Map<string, ShapeCount>();
  for (const p of pods) {
    const req = toPendingJob(p, 0).request;
    const key = `${p.cpu}|${p.milli}|${p.numGpu}|${p.spec.join('|')}`;
    const c = m.get(key);
    if (c) c.count++;
    else m.set(key, { request: { ...req, memoryMiB: 0 }, count: 1 });
  }
  return [...m.values()];
}

export type Policy = 'random' | 'best-fit' | 'fgd' | 'gantry';

/** A policy places one pod; returns whether it fit. */
type Placer = (job: PendingJob, pod: OpenbPod) => boolean;

function enginePlacer(snapshot: ClusterSnapshot, profile: string | Profile, learn: boolean): Placer {
  const engine = new Engine(snapshot, { profile });
  return (job) => (learn ? engine.submit(job) : engine.place(job)).status.code === 'success';
}

/** Random baseline (bench-local: the engine holds no randomness): a uniformly random feasible node per pod. */
function randomPlacer(nodes: OpenbNode[], rng: Rng): Placer {
  const cpu = nodes.map((n) => n.cpu);
  const mem = nodes.map((n) => n.mem);
  const gpu = nodes.map((n) => new Array<number>(n.gpus).fill(1000));
  return (_job, p) => {
    const ok: number[] = [];
    for (let i = 0; i < nodes.length; i++) {
      if (cpu[i]! < p.cpu || mem[i]! < p.mem) continue;
      if (p.numGpu > 0) {
        if (p.spec.length && !p.spec.includes(nodes[i]!.model)) continue;
        const g = gpu[i]!;
        if (p.milli < 1000 ? !g.some((f) => f >= p.milli) : g.filter((f) => f === 1000).length < p.numGpu) continue;
      }
      ok.push(i);
    }
    if (ok.length === 0) return false;
    const i = ok[rng.int(ok.length)]!;
    cpu[i]! -= p.cpu;
    mem[i]! -= p.mem;
    const g = gpu[i]!;
    if (p.numGpu > 0 && p.milli < 1000) {
      const k = g.findIndex((f) => f >= p.milli);
      g[k]! -= p.milli;
    } else {
      let left = p.numGpu;
      for (let k = 0; k < g.length && left > 0; k++)
        if (g[k] === 1000) {
          g[k] = 0;
          left--;
        }
    }
    return true;
  };
}

export interface RunResult {
  allocPctAt: Record<string, number>;
  unallocatedPctAt100: number;
  pods: number;
  /** Wall-clock seconds of the replay (snapshot building excluded). */
  seconds: number;
  /** CPU seconds of the replay (fairer on a shared machine). */
  cpuSeconds: number;
}

export function runOnce(nodes: OpenbNode[], pods: OpenbPod[], policy: Policy, seed: number): RunResult {
  const capacity = nodes.reduce((s, n) => s + n.gpus * 1000, 0);
  const rng = new Rng(seed);
  const stream = workload(pods, capacity, rng);
  // fixed random node order per run (ties go to the earlier node)
  const order = new Rng(seed * 7919 + 1).shuffle(nodes.map((_, i) => i));
  const snapshot: ClusterSnapshot = { nodes: order.map((i) => toNodeState(nodes[i]!)) };
  let place: Placer;
  switch (policy) {
    case 'random':
      place = randomPlacer(nodes, new Rng(seed * 31 + 7));
      break;
    case 'best-fit':
      place = enginePlacer(snapshot, 'best-fit', false);
      break;
    case 'fgd':
      place = enginePlacer(snapshot, { ...PROFILES.fgd!, args: { fgd: { shapes: traceShapes(pods) } } }, false);
      break;
    case 'gantry':
      place = enginePlacer(snapshot, 'gantry', true);
      break;
  }
  const unit = capacity / 100;
  const sums = new Map<number, { s: number; n: number }>();
  let arrived = 0;
  let used = 0;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  stream.forEach((p, seq) => {
    const demand = p.numGpu * p.milli;
    arrived += demand;
    if (place(toPendingJob(p, seq), p)) used += demand;
    const x = Math.round(arrived / unit);
    const e = sums.get(x);
    if (e) {
      e.s += used / unit;
      e.n++;
    } else sums.set(x, { s: used / unit, n: 1 });
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(c0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const at = (x: number): number => {
    const e = sums.get(x);
    if (e) return e.s / e.n;
    let s = 0;
    let n = 0;
    for (const k of [x - 1, x, x + 1]) {
      const w = sums.get(k);
      if (w) {
        s += w.s;
        n += w.n;
      }
    }
    return n ? s / n : Number.NaN;
  };
  const allocPctAt: Record<string, number> = {};
  for (const x of [80, 90, 100, 110, 120, 130]) allocPctAt[x] = at(x);
  return { allocPctAt, unallocatedPctAt100: 100 - allocPctAt[100]!, pods: stream.length, seconds, cpuSeconds };
}

export interface OpenbSummary {
  trace: string;
  policy: Policy;
  seeds: number[];
  unallocatedPctAt100: number;
  sd: number;
  allocPctAt: Record<string, number>;
  podsPerSecond: number;
  /** Pods per CPU-second (the process's user + system time), insensitive to other load on the machine. */
  podsPerCpuSecond: number;
}

export function runOpenb(nodesPath: string, podsPath: string, policy: Policy, seeds: number[], log?: (s: string) => void): OpenbSummary {
  const nodes = loadNodes(nodesPath);
  const pods = loadPods(podsPath);
  const runs: RunResult[] = [];
  for (const seed of seeds) {
    const r = runOnce(nodes, pods, policy, seed);
    runs.push(r);
    log?.(`seed ${seed}: unallocated@100 ${r.unallocatedPctAt100.toFixed(3)}%  ${Math.round(r.pods / r.seconds)} pods/s`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const un = runs.map((r) => r.unallocatedPctAt100);
  const m = mean(un);
  const sd = un.length > 1 ? Math.sqrt(un.reduce((a, b) => a + (b - m) ** 2, 0) / (un.length - 1)) : 0;
  const allocPctAt: Record<string, number> = {};
  for (const x of ['80', '90', '100', '110', '120', '130']) allocPctAt[x] = round3(mean(runs.map((r) => r.allocPctAt[x]!)));
  const trace = podsPath.replace(/^.*\//, '').replace(/\.csv$/, '');
  return {
    trace,
    policy,
    seeds,
    unallocatedPctAt100: round3(m),
    sd: round3(sd),
    allocPctAt,
    podsPerSecond: Math.round(runs.reduce((a, r) => a + r.pods, 0) / runs.reduce((a, r) => a + r.seconds, 0)),
    podsPerCpuSecond: Math.round(runs.reduce((a, r) => a + r.pods, 0) / runs.reduce((a, r) => a + r.cpuSeconds, 0)),
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
