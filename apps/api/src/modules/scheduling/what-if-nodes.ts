import type { NodeRow } from '../cluster/cluster.repository';

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
    for (const g of n.gpus)
      for (const a of g.allocations) {
        if (!a.jobId) continue;
        const set = out.get(a.jobId);
        if (set) set.add(n.id);
        else out.set(a.jobId, new Set([n.id]));
      }
  return out;
}

/**
 * The nodes a preemption what-if ("could the job be placed once `without` have let go?") has to
 * look at, for a job that has no room on the cluster as it is: only where those jobs leave can
 * room appear. One replica (or a gang bound to one node) goes on one node, so the nodes they
 * leave are enough; a gang bound to a leaf or a spine may combine them with the other nodes of their leaves or spines; any other
 * gang needs the whole cluster. At 10,000 nodes this keeps each of the cycle's what-ifs (up to
 * 300) to a few nodes instead of an engine built over the whole cluster.
 */
export function whatIfNodes(
  nodes: readonly NodeRow[],
  holders: ReadonlyMap<string, ReadonlySet<string>>,
  without: Iterable<string>,
  job: WhatIfJob,
): readonly NodeRow[] {
  const left = new Set<string>();
  for (const jobId of without) for (const nodeId of holders.get(jobId) ?? []) left.add(nodeId);
  if (job.replicas <= 1 || (job.topologyRequired && job.topologyLevel === 'node')) return nodes.filter((n) => left.has(n.id));
  const group = !job.topologyRequired ? undefined : job.topologyLevel === 'leaf' ? leafOf : job.topologyLevel === 'spine' ? spineOf : undefined;
  if (!group) return nodes;
  const groups = new Set(nodes.filter((n) => left.has(n.id)).map(group));
  return nodes.filter((n) => groups.has(group(n)));
}

const leafOf = (n: NodeRow) => n.leaf.name;
const spineOf = (n: NodeRow) => n.leaf.spine.name;
