/**
 * The engine's contract with its callers (the worker's scheduling cycle and the bench).
 * Pure data: no I/O, no clock, no randomness. The worker builds a ClusterSnapshot from
 * Postgres, calls `runCycle`, and commits the decisions it returns.
 */
import type { Persona } from '@gantry/contracts';

export type { Persona } from '@gantry/contracts';
export type GpuMode = 'whole' | 'mig' | 'shared';
export type TopologyLevel = 'node' | 'leaf' | 'spine' | 'any';

/** One MIG slice (GPU instance) that exists on a GPU. `busy` = held by an allocation. */
export interface MigSliceState {
  profile: string;
  start: number;
  size: number;
  busy: boolean;
}

export interface GpuState {
  id: string;
  index: number;
  model: string;
  /** NVLink domain inside the node (GPUs sharing a domain talk over NVLink). */
  nvlinkDomain: number;
  healthy: boolean;
  /** Whether the GPU takes new work (false while a MIG change is being applied to it). */
  schedulable: boolean;
  mode: GpuMode;
  /** Whole GPU held by a job (mode 'whole'). */
  allocated: boolean;
  /** Thousandths of the GPU held by shares (mode 'shared'), 0..1000. */
  sharedMilliUsed: number;
  /** Existing MIG slices (mode 'mig'). */
  mig: MigSliceState[];
}

export interface NodeState {
  id: string;
  name: string;
  leaf: string;
  spine: string;
  /** false when cordoned, draining, switching persona or down. */
  schedulable: boolean;
  persona: Persona;
  cpuMilli: number;
  memoryMiB: number;
  cpuMilliFree: number;
  memoryMiBFree: number;
  gpus: GpuState[];
}

export interface ClusterSnapshot {
  nodes: NodeState[];
}

/** Per-replica request. Exactly one of gpus / migProfile / gpuMilli is set. */
export interface ReplicaRequest {
  gpus?: number;
  migProfile?: string;
  /** Share of one GPU in thousandths, 1..999. */
  gpuMilli?: number;
  /** Allowed GPU models; empty or undefined = any. */
  gpuModels?: string[];
  cpuMilli: number;
  memoryMiB: number;
}

export interface PendingJob {
  id: string;
  teamId: string;
  /** Larger runs first. */
  priority: number;
  /** Submission time in ms (ordering only; the engine never reads a clock). */
  createdAtMs: number;
  replicas: number;
  request: ReplicaRequest;
  topology: { level: TopologyLevel; required: boolean };
  /** Node persona the job needs (vm jobs need 'vm-passthrough'); default 'container'. */
  persona?: Persona;
}

export interface PlacedGpu {
  gpuId: string;
  index: number;
  migProfile?: string;
  migStart?: number;
  /** Thousandths for a share. */
  milli?: number;
}

export interface ReplicaPlacement {
  replica: number;
  nodeId: string;
  gpus: PlacedGpu[];
}

export interface Reason {
  /** Machine-readable, e.g. 'insufficient_gpus', 'topology_unsatisfiable'. */
  code: string;
  /** A sentence a person can read. */
  message: string;
}

export interface CycleDecision {
  placed: { jobId: string; replicas: ReplicaPlacement[] }[];
  pending: { jobId: string; reasons: Reason[] }[];
  /** Jobs not tried because the cycle had placed `maxPlacements` (in queue order, after the placed ones): the next cycle tries them. */
  deferred?: string[];
}

/** Codes of a plugin or placement status (kube-scheduler's framework). */
export type StatusCode = 'success' | 'unschedulable' | 'unresolvable' | 'error';

/** Result of a plugin call or a placement: a value, never an exception. */
export interface Status {
  code: StatusCode;
  reasons: Reason[];
}

/** A request shape seen recently (the fragmentation model learns the mix from these). */
export interface ShapeCount {
  request: ReplicaRequest;
  count: number;
}

/** Resources a team currently holds (dominant-resource fair share input). */
export interface TeamUsage {
  gpus: number;
  cpuMilli: number;
  memoryMiB: number;
}

/** Optional inputs of a cycle. Everything is data: the engine reads no clock and no randomness. */
export interface CycleOptions {
  /** Scoring profile: 'gantry' (default, fragmentation-aware), 'best-fit', 'spread', 'fgd', ... */
  profile?: string;
  /** Recent request shapes (e.g. the last day's jobs) that seed the fragmentation model with the queue. */
  history?: ShapeCount[];
  /** Current usage per team, for weighted dominant-resource fair ordering. */
  teamUsage?: Record<string, TeamUsage>;
  /** Fair-share weight per team (default 1). */
  teamWeights?: Record<string, number>;
  /**
   * Stop once this many jobs are placed: the jobs after them in queue order are returned as
   * `deferred`, untried. Bounds a cycle's time (and its commit) however deep the queue.
   */
  maxPlacements?: number;
  /**
   * The caller never changes a node state of the snapshot in place (it keeps states between
   * cycles and derives a new one for a node that changed): the engine remembers each state's
   * class signature, and shares each state's GPU views between the engines built on it (a node's
   * are copied before the engine first changes it), instead of building them again per cycle.
   */
  frozenStates?: boolean;
}
