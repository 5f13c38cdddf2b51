/**
 * Gang placement: all replicas of a multi-replica job or none, inside one topology domain when
 * the job requires it (node, leaf switch, spine). The tightest domain that can hold the gang is
 * filled greedily, best score first; a failure says what the best domain had room for.
 */
import type { CycleState } from './framework';
import { fitCount } from './device-options';
import type { Journal } from './journal';
import { placementOf } from './journal';
import type { ClassEntry } from './node-classes';
import { describeRequest, formatCount } from './reasons';
import type { Reason, ReplicaPlacement, TopologyLevel } from './types';
import type { DeviceOption, JobView, NodeClass, NodeView } from './views';

/** What gang placement needs of the engine: its nodes and classes, evaluation, mutation and undo. */
export interface GangHost {
  readonly nodes: readonly NodeView[];
  readonly classes: ReadonlyMap<string, NodeClass>;
  /** The cached evaluation of a node class for the state's job (filters, options, best score). */
  entry(state: CycleState, cls: NodeClass, epoch: number): ClassEntry;
  /** Applies one replica and re-classifies the node. */
  apply(n: NodeView, job: JobView, option: DeviceOption): Journal;
  /** Takes back the journal's changes (in reverse) and re-classifies the nodes. */
  undo(journal: Journal[]): void;
}

export type GangResult = { ok: true; replicas: ReplicaPlacement[]; journal: Journal[] } | { ok: false; reason: Reason };

const LEVELS: TopologyLevel[] = ['node', 'leaf', 'spine', 'any'];

export function placeGang(host: GangHost, state: CycleState, epoch: number): GangResult {
  const job = state.job.job;
  const want = job.replicas;
  const maxLevel = job.topology.required ? job.topology.level : 'any';
  const top = LEVELS.indexOf(maxLevel);
  // feasible nodes with how many replicas each could take, in snapshot order (marked by position:
  // no sort of thousands of nodes per gang)
  const room = new Int32Array(host.nodes.length);
  let count = 0;
  for (const cls of host.classes.values()) {
    const e = host.entry(state, cls, epoch);
    if (e.status !== null) continue;
    if (e.fit < 0) e.fit = fitCount(state.job, host.nodes[cls.nodes[0]!]!);
    if (e.fit <= 0) continue;
    for (const pos of cls.nodes) room[pos] = e.fit;
    count += cls.nodes.length;
  }
  const feasible: NodeView[] = new Array(count);
  for (let pos = 0, k = 0; k < count; pos++) if (room[pos]! > 0) feasible[k++] = host.nodes[pos]!;
  let bestCapacity = 0;
  for (let li = 0; li <= top; li++) {
    const level = LEVELS[li]!;
    // the tightest domain that holds the gang (least spare room), then the earliest; a domain
    // whose summed per-node room covers the gang always succeeds greedily (each replica uses
    // one unit of one node's room), so only the chosen domain is simulated
    let chosen: Domain | null = null;
    if (level === 'node') {
      // each node its own domain (no domain objects for thousands of nodes); nodes in snapshot order
      let best = -1;
      for (const n of feasible) {
        const cap = room[n.pos]!;
        if (li === top) bestCapacity = Math.max(bestCapacity, cap);
        if (cap >= want && (best < 0 || cap < room[best]!)) best = n.pos;
      }
      if (best >= 0) chosen = { nodes: [host.nodes[best]!], cap: room[best]! };
    } else
      for (const d of domainsAt(level, feasible, room)) {
        if (li === top) bestCapacity = Math.max(bestCapacity, d.cap);
        if (d.cap < want) continue;
        if (!chosen || d.cap < chosen.cap || (d.cap === chosen.cap && d.nodes[0]!.pos < chosen.nodes[0]!.pos)) chosen = d;
      }
    if (chosen) {
      const sim = greedy(host, state, epoch, chosen.nodes, want);
      if (sim) return { ok: true, replicas: sim.replicas, journal: sim.journal };
    }
  }
  const where =
    maxLevel === 'node' ? 'on one node' : maxLevel === 'leaf' ? 'under one leaf switch' : maxLevel === 'spine' ? 'under one spine' : 'in the cluster';
  const best = maxLevel === 'any' ? 'the cluster' : maxLevel === 'node' ? 'the best node' : `the best ${maxLevel}`;
  return {
    ok: false,
    reason: {
      code: maxLevel === 'any' ? 'gang_unsatisfiable' : 'topology_unsatisfiable',
      message: `needs ${want} x ${describeRequest(job.request)} ${where}: ${best} has room for ${formatCount(Math.min(bestCapacity, want - 1))}`,
    },
  };
}

/** Feasible nodes of one topology domain (in snapshot order) and the replicas they have room for together. */
interface Domain {
  nodes: NodeView[];
  cap: number;
}

/** The domains of a level above the node: each leaf switch (within its spine), each spine, or the whole cluster. */
function domainsAt(level: Exclude<TopologyLevel, 'node'>, feasible: readonly NodeView[], room: Int32Array): Iterable<Domain> {
  if (level === 'any') {
    let cap = 0;
    for (const n of feasible) cap += room[n.pos]!;
    return feasible.length ? [{ nodes: feasible as NodeView[], cap }] : [];
  }
  // leaves by spine (a leaf's name is unique within its spine only)
  const bySpine = new Map<string, Map<string, Domain>>();
  const out: Domain[] = [];
  for (const n of feasible) {
    let inSpine = bySpine.get(n.spine);
    if (!inSpine) bySpine.set(n.spine, (inSpine = new Map()));
    const key = level === 'leaf' ? n.leaf : '';
    let d = inSpine.get(key);
    if (!d) {
      inSpine.set(key, (d = { nodes: [], cap: 0 }));
      out.push(d);
    }
    d.nodes.push(n);
    d.cap += room[n.pos]!;
  }
  return out;
}

/** Places `want` replicas one by one on the best-scoring of `nodes`; undoes everything and returns null if one does not fit. */
function greedy(
  host: GangHost,
  state: CycleState,
  epoch: number,
  nodes: NodeView[],
  want: number,
): { replicas: ReplicaPlacement[]; journal: Journal[] } | null {
  const replicas: ReplicaPlacement[] = [];
  const journal: Journal[] = [];
  for (let r = 0; r < want; r++) {
    let best: NodeView | null = null;
    let bestE: ClassEntry | null = null;
    for (const n of nodes) {
      const e = host.entry(state, n.cls, epoch);
      if (e.status !== null) continue;
      if (!bestE || e.bestScore > bestE.bestScore || (e.bestScore === bestE.bestScore && n.pos < best!.pos)) {
        best = n;
        bestE = e;
      }
    }
    if (!best || !bestE) {
      host.undo(journal);
      return null;
    }
    const option = bestE.options[bestE.best]!;
    journal.push(host.apply(best, state.job, option));
    replicas.push(placementOf(r, best, state.job, option));
  }
  return { replicas, journal };
}
