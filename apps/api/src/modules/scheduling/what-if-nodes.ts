import type { NodeRow } from '../cluster/cluster.repository';
import { perRow } from '../cluster/per-row';

/** The job of a preemption what-if, as far as where it may go is concerned. */
export interface WhatIfJob {
  replicas: number;
  topologyLevel: string;
  topologyRequired: boolean;
}

/** For each job that holds GPUs, the nodes it holds them on (one pass over the cycle's rows). */
export function nodesByJob(nodes: readonly NodeRow[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const n of nodes)
    for (const jobId of jobsOn(n)) {
      const set = out.get(jobId);
      if (set) set.add(n.id);
      else out.set(jobId, new Set([n.id]));
    }
  return out;
}

/** The jobs that hold GPUs on a node, read once per row. */
const jobsOn = perRow((n): readonly string[] => {
  const held = new Set<string>();
  for (const g of n.gpus) for (const a of g.allocations) if (a.jobId) held.add(a.jobId);
  return [...held];
});

/**
 * The nodes a preemption what-if ("could the job be placed once `without` have let go?") has to
 * look at, for a job that has no room on the cluster as it is: only where those jobs leave can
 * room appear. One replica (or a gang bound to one node) goes on one node, so the nodes they
 * leave are enough; a gang bound to a leaf or a spine may combine them with the other nodes of
 * their leaves or spines; any other gang needs the whole cluster. At 10,000 nodes this keeps each
 * of the cycle's what-ifs (up to 300) to a few nodes instead of an engine built over the whole
 * cluster. Built once per cycle: a what-if costs the nodes its victims hold, not a pass over the
 * cluster (300 passes over 10,000 rows were half of a cycle's preemption time).
 */
export class WhatIfNodes {
  /** For each job that holds GPUs, the nodes it holds them on. */
  readonly holders: ReadonlyMap<string, ReadonlySet<string>>;
  private readonly position: ReadonlyMap<string, number>;
  private readonly groups = new Map<'leaf' | 'spine', Map<string, number[]>>();

  constructor(private readonly nodes: readonly NodeRow[]) {
    this.holders = nodesByJob(nodes);
    this.position = new Map(nodes.map((n, i) => [n.id, i]));
  }

  /** The ids of the nodes on which `without` hold GPUs. */
  holding(without: Iterable<string>): Set<string> {
    const out = new Set<string>();
    for (const jobId of without) for (const nodeId of this.holders.get(jobId) ?? []) out.add(nodeId);
    return out;
  }

  /** The rows (in the cycle's order) a what-if of `job` without `without` runs on. */
  of(without: Iterable<string>, job: WhatIfJob): readonly NodeRow[] {
    const left = new Set<number>();
    for (const nodeId of this.holding(without)) {
      const at = this.position.get(nodeId);
      if (at !== undefined) left.add(at);
    }
    if (job.replicas <= 1 || (job.topologyRequired && job.topologyLevel === 'node')) return this.rows(left);
    const level = !job.topologyRequired ? undefined : job.topologyLevel === 'leaf' ? 'leaf' : job.topologyLevel === 'spine' ? 'spine' : undefined;
    if (!level) return this.nodes;
    const members = this.grouped(level);
    const wanted = new Set<number>();
    for (const keyOf of new Set([...left].map((i) => groupOf(level, this.nodes[i]!)))) for (const i of members.get(keyOf) ?? []) wanted.add(i);
    return this.rows(wanted);
  }

  private rows(at: Set<number>): NodeRow[] {
    return [...at].sort((a, b) => a - b).map((i) => this.nodes[i]!);
  }

  /** Positions of the nodes of each leaf (or spine), read once per cycle when a gang first asks. */
  private grouped(level: 'leaf' | 'spine'): Map<string, number[]> {
    let members = this.groups.get(level);
    if (!members) {
      members = new Map();
      this.nodes.forEach((n, i) => {
        const key = groupOf(level, n);
        const list = members!.get(key);
        if (list) list.push(i);
        else members!.set(key, [i]);
      });
      this.groups.set(level, members);
    }
    return members;
  }
}

const groupOf = (level: 'leaf' | 'spine', n: NodeRow) => (level === 'leaf' ? n.leaf.name : n.leaf.spine.name);
