/**
 * Clusters for the planner: a list of nodes (model, GPU count, CPU, memory), read from the openb
 * node list, built from a topology or the live inventory by the caller, and edited for what-ifs
 * (add or remove nodes of a model).
 */
import { validateMigLayout, type NodeState } from '@gantry/scheduler';
import { gpuPowerSpec, migProfile } from '@gantry/contracts';
import { Problems, parseCsv } from './input-error';
import type { PlannerJob } from './workload';

export interface PlannerNode {
  id: string;
  model: string;
  gpus: number;
  cpuMilli: number;
  memoryMiB: number;
  /** Topology (optional): leaf and spine switch names. */
  leaf?: string;
  spine?: string;
  /** The MIG layout every GPU of the node carries (absent or empty: MIG off). */
  migLayout?: MigLayoutEntry[];
}

export interface MigLayoutEntry {
  profile: string;
  start: number;
}

/** A what-if MIG policy: every GPU of `model` carries `layout` (empty: MIG off). */
export interface MigPolicyEdit {
  model: string;
  layout: MigLayoutEntry[];
}

export interface ClusterEdit {
  /** Positive: add that many nodes like the first of the model (or `template`); negative: remove from the end. */
  model: string;
  count: number;
  template?: Omit<PlannerNode, 'id' | 'model'>;
}

export function parseOpenbNodes(text: string, source = 'cluster'): PlannerNode[] {
  const { rows } = parseCsv(text, source, ['sn', 'cpu_milli', 'memory_mib', 'gpu', 'model']);
  const p = new Problems(source);
  const nodes: PlannerNode[] = [];
  rows.forEach((r, i) => {
    const row = i + 1;
    const num = (f: string, min: number) => {
      const v = r[f] ?? '';
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < min) p.add(row, f, `must be an integer >= ${min}, got ${JSON.stringify(v.slice(0, 40))}`);
      return n;
    };
    const node = { id: r.sn ?? '', model: r.model ?? '', gpus: num('gpu', 0), cpuMilli: num('cpu_milli', 1), memoryMiB: num('memory_mib', 1) };
    if (!node.id) p.add(row, 'sn', 'is empty');
    if (node.gpus > 0 && !gpuPowerSpec(node.model)) p.add(row, 'model', `unknown GPU model ${JSON.stringify(node.model)}`);
    nodes.push(node);
  });
  p.throwIfAny();
  return nodes;
}

export function applyEdits(nodes: PlannerNode[], edits: ClusterEdit[]): PlannerNode[] {
  const out = [...nodes];
  const p = new Problems('cluster');
  edits.forEach((e, i) => {
    if (!gpuPowerSpec(e.model)) return p.add(i + 1, 'edits.model', `unknown GPU model ${JSON.stringify(e.model)}`);
    if (e.count >= 0) {
      const like = e.template ?? out.find((n) => n.model === e.model);
      if (!like) return p.add(i + 1, 'edits.template', `the cluster has no ${e.model} node to copy: give a template`);
      for (let k = 0; k < e.count; k++)
        out.push({
          id: `whatif-${e.model}-${i}-${k}`,
          model: e.model,
          gpus: like.gpus,
          cpuMilli: like.cpuMilli,
          memoryMiB: like.memoryMiB,
          leaf: like.leaf,
          spine: like.spine,
          ...(like.migLayout ? { migLayout: like.migLayout } : {}),
        });
    } else {
      let left = -e.count;
      for (let k = out.length - 1; k >= 0 && left > 0; k--)
        if (out[k]!.model === e.model) {
          out.splice(k, 1);
          left--;
        }
      if (left > 0) p.add(i + 1, 'edits.count', `removes ${-e.count} ${e.model} nodes, the cluster has only ${-e.count - left}`);
    }
  });
  p.throwIfAny();
  return out;
}

/**
 * Applies what-if MIG policies: the GPUs of each named model take its layout (checked against
 * NVIDIA's geometry; problems name the policy's row). A model the cluster does not have is refused.
 */
export function applyMigPolicies(nodes: PlannerNode[], policies: MigPolicyEdit[]): PlannerNode[] {
  const p = new Problems('cluster');
  const byModel = new Map<string, MigLayoutEntry[]>();
  policies.forEach((m, i) => {
    if (!nodes.some((n) => n.model === m.model && n.gpus > 0)) return p.add(i + 1, 'mig.model', `the cluster has no ${m.model} GPU`);
    if (m.layout.length > 0) {
      const v = validateMigLayout(m.model, m.layout);
      if (!v.ok) return p.add(i + 1, 'mig.layout', `${v.rule}: ${v.message}`);
    }
    byModel.set(m.model, m.layout);
  });
  p.throwIfAny();
  return nodes.map((n) => {
    const layout = byModel.get(n.model);
    if (layout === undefined) return n;
    const { migLayout: _old, ...rest } = n;
    return layout.length ? { ...rest, migLayout: layout } : rest;
  });
}

/** An empty node as the engine sees it. */
export function nodeState(n: PlannerNode, schedulable = true): NodeState {
  return {
    id: n.id,
    name: n.id,
    leaf: n.leaf ?? 'leaf-0',
    spine: n.spine ?? 'spine-0',
    schedulable,
    persona: 'container',
    cpuMilli: n.cpuMilli,
    memoryMiB: n.memoryMiB,
    cpuMilliFree: n.cpuMilli,
    memoryMiBFree: n.memoryMiB,
    gpus: Array.from({ length: n.gpus }, (_, i) => ({
      id: `${n.id}/gpu${i}`,
      index: i,
      model: n.model,
      nvlinkDomain: 0,
      healthy: true,
      schedulable: true,
      mode: n.migLayout?.length ? ('mig' as const) : ('whole' as const),
      allocated: false,
      sharedMilliUsed: 0,
      mig: (n.migLayout ?? []).map((e) => ({ profile: e.profile, start: e.start, size: migProfile(n.model, e.profile)?.size ?? 1, busy: false })),
    })),
  };
}

/** Could this job run on this node when the node is empty (resources and GPU model)? */
export function fitsEmpty(n: PlannerNode, j: PlannerJob): boolean {
  const r = j.request;
  if (n.cpuMilli < r.cpuMilli || n.memoryMiB < r.memoryMiB) return false;
  const gpus = r.gpus ?? (r.gpuMilli || r.migProfile ? 1 : 0);
  if (gpus === 0) return true;
  if (r.gpuModels?.length && !r.gpuModels.includes(n.model)) return false;
  if (n.migLayout?.length) return !!r.migProfile && n.migLayout.some((e) => e.profile === r.migProfile);
  return n.gpus >= gpus;
}

/**
 * Refuses a cluster on which nothing of the workload could ever run, and names the jobs that
 * fit on no node (first few): a plan whose every job is unplaceable is bad input, not a result.
 */
export function checkFeasible(nodes: PlannerNode[], jobs: PlannerJob[]): { neverFits: string[] } {
  const p = new Problems('cluster');
  if (nodes.length === 0) p.add(null, 'nodes', 'the cluster has no nodes');
  p.throwIfAny();
  const neverFits: string[] = [];
  const seen = new Map<string, boolean>();
  for (const j of jobs) {
    const r = j.request;
    const key = `${r.cpuMilli}|${r.memoryMiB}|${r.gpus ?? 0}|${r.gpuMilli ?? 0}|${r.migProfile ?? ''}|${r.gpuModels?.join(',') ?? ''}|${j.replicas}`;
    let ok = seen.get(key);
    if (ok === undefined) seen.set(key, (ok = nodes.some((n) => fitsEmpty(n, j))));
    if (!ok) neverFits.push(j.id);
  }
  if (jobs.length > 0 && neverFits.length === jobs.length) {
    const j = jobs[0]!;
    p.add(null, 'nodes', `no node fits any job of the workload (e.g. ${j.id}: ${describe(j)})`);
  }
  p.throwIfAny();
  return { neverFits };
}

function describe(j: PlannerJob): string {
  const r = j.request;
  const gpu = r.gpus ? `${r.gpus} GPU` : r.gpuMilli ? `${r.gpuMilli / 1000} GPU share` : r.migProfile ? `MIG ${r.migProfile}` : 'no GPU';
  return `${gpu}${r.gpuModels?.length ? ` of ${r.gpuModels.join('|')}` : ''}, ${r.cpuMilli / 1000} CPU, ${r.memoryMiB} MiB`;
}
