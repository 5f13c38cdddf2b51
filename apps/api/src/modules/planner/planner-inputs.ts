/**
 * The planner's inputs read from the cluster itself: the job history as a workload and the live
 * inventory as a cluster (docs/planner.md). Pure: rows in, planner jobs and nodes out.
 */
import { gpuPowerSpec, PRIORITY_VALUE, type JobResources, type Priority } from '@gantry/contracts';
import { Problems, type PlannerJob, type PlannerNode } from '@gantry/planner';
import type { ReplicaRequest } from '@gantry/scheduler';
import { parseTopology, topologyNodes } from '@gantry/driver';

export interface HistoryRow {
  id: string;
  teamId: string;
  state: string;
  priority: Priority;
  replicas: number;
  resources: unknown;
  durationSeconds: number | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * A job's run time: its declared work (`durationSeconds`) when it has one; else the time it ran
 * (started to finished); else, still running, the time it has run so far (a lower bound). A job
 * that never started and has no declared work has no run time and is left out.
 */
export function historyRunSeconds(r: HistoryRow, now: Date): number | null {
  if (r.durationSeconds !== null) return Math.max(0, r.durationSeconds);
  if (!r.startedAt) return null;
  return Math.max(0, ((r.finishedAt ?? now).getTime() - r.startedAt.getTime()) / 1000);
}

/** Jobs submitted since the window opened, as the planner's workload: arrivals from the first submission. */
export function historyJobs(rows: HistoryRow[], now: Date): PlannerJob[] {
  const jobs: PlannerJob[] = [];
  for (const r of rows) {
    // cancelled or failed before it ever ran: no demand the cluster served
    if (!r.startedAt && (r.state === 'cancelled' || r.state === 'failed')) continue;
    const duration = historyRunSeconds(r, now);
    if (duration === null) continue;
    jobs.push({
      id: r.id,
      teamId: r.teamId,
      arrival: r.createdAt.getTime() / 1000,
      duration,
      replicas: r.replicas,
      request: replicaRequest(r.resources as JobResources),
      priority: PRIORITY_VALUE[r.priority] ?? 0,
    });
  }
  const t0 = Math.min(...jobs.map((j) => j.arrival));
  for (const j of jobs) j.arrival -= t0;
  return jobs.sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The engine's request of one replica of a job's resources (JobResources of @gantry/contracts). */
export function replicaRequest(r: JobResources): ReplicaRequest {
  const models = (Array.isArray(r.gpuModel) ? (r.gpuModel as string[]) : r.gpuModel ? [r.gpuModel] : []).filter(Boolean);
  return {
    ...(r.gpus !== undefined ? { gpus: r.gpus } : {}),
    ...(r.migProfile !== undefined ? { migProfile: r.migProfile } : {}),
    ...(r.gpuFraction !== undefined ? { gpuMilli: Math.round(r.gpuFraction * 1000) } : {}),
    ...(models.length ? { gpuModels: models } : {}),
    cpuMilli: r.cpuMilli ?? 0,
    memoryMiB: r.memoryMiB ?? 0,
  };
}

export interface InventoryRow {
  name: string;
  cpuMilli: number;
  memoryMiB: number;
  leaf: { name: string; spine: { name: string } };
  gpus: { model: string }[];
}

/**
 * The live inventory as planner nodes: every node, its GPU count and model (a node with GPUs of
 * several models counts as its most common one), its CPU, memory and switches. A GPU model
 * without power figures is refused, naming the node.
 */
export function inventoryNodes(rows: InventoryRow[], source = 'cluster.inventory'): PlannerNode[] {
  const p = new Problems(source);
  if (rows.length === 0) p.add(null, 'nodes', 'the cluster has no nodes');
  const nodes = rows.map((r, i) => {
    const counts = new Map<string, number>();
    for (const g of r.gpus) counts.set(g.model, (counts.get(g.model) ?? 0) + 1);
    const model = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? '';
    if (r.gpus.length > 0 && !gpuPowerSpec(model)) p.add(i + 1, 'model', `node ${r.name}: unknown GPU model ${JSON.stringify(model)}`);
    return { id: r.name, model, gpus: r.gpus.length, cpuMilli: r.cpuMilli, memoryMiB: r.memoryMiB, leaf: r.leaf.name, spine: r.leaf.spine.name };
  });
  p.throwIfAny();
  return nodes;
}

/** A topology file (the simulated cluster's JSON format) as planner nodes; what is wrong is named by its path. */
export function topologyFileNodes(json: string): PlannerNode[] {
  const p = new Problems('cluster.topology');
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    p.add(null, 'json', `is not JSON: ${(e as Error).message}`);
    p.throwIfAny();
  }
  let rows: InventoryRow[] = [];
  try {
    rows = topologyNodes(parseTopology(raw)).map(({ node, leaf, spine }) => ({
      name: node.name,
      cpuMilli: node.cpuMilli,
      memoryMiB: node.memoryMiB,
      leaf: { name: leaf, spine: { name: spine } },
      gpus: node.gpus.map((g) => ({ model: g.model })),
    }));
  } catch (e) {
    // the topology parser names the path: spines[0].leaves[1].nodes[2].cpuMilli: ...
    const m = /^([\w.[\]]+): (.*)$/s.exec((e as Error).message);
    p.add(null, m ? m[1]! : 'json', m ? m[2]! : (e as Error).message);
    p.throwIfAny();
  }
  return inventoryNodes(rows, 'cluster.topology');
}
