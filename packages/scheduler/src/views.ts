/**
 * The engine's working types: how it reads a job (JobView), a node (NodeView, GpuView), the
 * device options a node offers one replica, and the handle plugins get on the engine. Types
 * only (plus `poolFree`, the free share every plugin needs): everything else imports these,
 * and this file imports nothing of the engine's, so there is no import cycle.
 */
import type { GpuMode, MigSliceState, PendingJob, Persona, ReplicaPlacement, Status, TeamUsage } from './types';
import type { JobKind, MixShape, ShapeMix } from './shape-mix';

export type { JobKind };

/** A job's request as the engine reads it (computed once per job by PreFilter). */
export interface JobView {
  job: PendingJob;
  kind: JobKind;
  /** Whole GPUs per replica (kind 'whole'); 1 for share / MIG; 0 for CPU-only. */
  gpus: number;
  /** Per-GPU thousandths: 1000 for whole, the share for 'share', 0 otherwise. */
  milli: number;
  migProfile: string | null;
  models: ReadonlySet<string> | null;
  cpu: number;
  mem: number;
  persona: Persona;
  shapeId: number;
  shape: MixShape;
}

/** Devices of one node for one replica: GPU positions in node.gpus, and the MIG slice position. */
export interface DeviceOption {
  gpus: number[];
  /** Position of the MIG slice in gpus[gpus[0]].mig, or -1. */
  slice: number;
}

export interface GpuView {
  id: string;
  index: number;
  model: string;
  domain: number;
  /** healthy and schedulable */
  usable: boolean;
  mode: GpuMode;
  allocated: boolean;
  milliUsed: number;
  mig: MigSliceState[];
}

export interface NodeView {
  /** Position in the snapshot: the fixed tie-break order. */
  pos: number;
  id: string;
  name: string;
  leaf: string;
  spine: string;
  schedulable: boolean;
  persona: Persona;
  cpuMilli: number;
  memoryMiB: number;
  cpuFree: number;
  memFree: number;
  gpus: GpuView[];
  /**
   * The GPU views are shared with every engine's view of the same frozen state
   * (EngineOptions.frozenStates) and never written: journal.ts gives the node its own copies
   * before its first change.
   */
  gpusShared: boolean;
  cls: NodeClass;
}

/** Nodes in the same state (see node-classes.ts): filters and scores run once per class. */
export interface NodeClass {
  /** Dense id (reused after the class empties). */
  id: number;
  /** Position in the engine's list of live classes. */
  live: number;
  sig: string;
  /** Positions of the nodes in this state, ascending. */
  nodes: number[];
  /** Per-plugin data about this node state (e.g. fragmentation statistics). */
  scratch: Map<string, unknown>;
}

export interface PlaceResult {
  status: Status;
  replicas: ReplicaPlacement[];
}

export interface Inventory {
  /** GPU models present, with the most GPUs of that model on one node. */
  maxGpusPerNode: Map<string, number>;
  maxGpusAnyNode: number;
}

/**
 * The nodes grouped by state (node-classes.ts): a sum over every node's free capacity costs one
 * look per distinct state, not per node (thousands of nodes, a few hundred states).
 */
export interface NodeStates {
  /** Calls `fn` once per distinct node state, with one node in that state and how many nodes are in it. */
  eachState(fn: (n: NodeView, count: number) => void): void;
}

/** What a plugin may read of the engine that built it (the Engine implements this). */
export interface EngineHandle extends NodeStates {
  readonly nodes: readonly NodeView[];
  readonly nodeById: ReadonlyMap<string, NodeView>;
  readonly inventory: Inventory;
  /** The learned shape mix (fragmentation and CPU-stranding models read it). */
  readonly mix: ShapeMix;
  /** Resources held per team; the team-usage Reserve plugin keeps it current. */
  readonly teamUsage: Map<string, TeamUsage>;
  /** Every way one replica of `job` can use this node's GPUs (ignoring CPU/memory). */
  deviceOptions(job: JobView, n: NodeView): DeviceOption[];
  /** The (interned) mix shape of a request. */
  mixShape(req: PendingJob['request'], persona: Persona): MixShape;
}

/** Free thousandths of a GPU in the whole/share pool (MIG GPUs are not in the pool). */
export function poolFree(g: GpuView): number {
  if (!g.usable) return 0;
  if (g.mode === 'whole') return g.allocated ? 0 : 1000;
  if (g.mode === 'shared') return 1000 - g.milliUsed;
  return 0;
}
