/**
 * The rows the rules read, as plain data (the rules are pure functions over this: unit tests
 * build it by hand, `load.ts` reads it from Postgres in one snapshot).
 */
import { activeSlotKey } from '../modules/allocations/active-slot';

export interface AllocationRow {
  id: string;
  tenantId: string;
  teamId: string;
  jobId: string | null;
  endpointId: string | null;
  /** A GPU of a node a bare-metal lease holds (docs/bare-metal.md); optional for rows built by hand. */
  bareMetalLeaseId?: string | null;
  replica: number;
  nodeId: string;
  gpuId: string;
  gpuModel: string;
  migProfile: string | null;
  migStart: number | null;
  milli: number;
  gpuUnits: number;
  activeSlot: string | null;
  startedAt: Date;
}

export interface GpuRow {
  id: string;
  nodeId: string;
  model: string;
  mode: 'whole' | 'mig' | 'shared';
  migCapable: boolean;
  health: 'healthy' | 'degraded' | 'unhealthy';
  schedulable: boolean;
  migTarget: unknown;
  migRequestedAt: Date | null;
}

export interface GpuInstanceRow {
  gpuId: string;
  profile: string;
  start: number;
  size: number;
}

export interface NodeRow {
  id: string;
  name: string;
  state: 'ready' | 'cordoned' | 'draining' | 'switching' | 'down';
  transitionStartedAt: Date | null;
  transitionEtaAt: Date | null;
}

export type JobStateName = 'pending' | 'starting' | 'running' | 'suspending' | 'suspended' | 'succeeded' | 'failed' | 'cancelled';

/** Jobs that are not finished, and finished jobs that still matter (named by an active allocation or with broken fields). */
export interface JobRow {
  id: string;
  teamId: string;
  state: JobStateName;
  replicas: number;
  resources: unknown;
  reasons: unknown;
  startedAt: Date | null;
  runningSince: Date | null;
  finishedAt: Date | null;
}

export interface ReplicaRow {
  id: string;
  endpointId: string;
  replica: number;
  activeKey: string | null;
  endedAt: Date | null;
  /** The endpoint's per-replica resources. */
  resources: unknown;
  teamId: string;
}

export interface QuotaRow {
  teamId: string;
  gpuModel: string;
  limit: number;
  updatedAt: Date;
}

export interface ClusterState {
  /** Active allocations (endedAt null). */
  allocations: AllocationRow[];
  /** Ended allocations that still carry an activeSlot (should be none). */
  endedWithSlot: { id: string; gpuId: string; activeSlot: string }[];
  gpus: GpuRow[];
  instances: GpuInstanceRow[];
  nodes: NodeRow[];
  jobs: JobRow[];
  /** Active replicas, and ended ones whose activeKey was not cleared. */
  replicas: ReplicaRow[];
  quotas: QuotaRow[];
  totalJobs: number;
}

/** States in which a job holds GPUs: placed (starting), running, or checkpointing before it releases them (suspending). */
export const HOLDING_STATES: readonly JobStateName[] = ['starting', 'running', 'suspending'];
/** States in which a job holds none and waits (pending) or is parked (suspended). */
export const IDLE_STATES: readonly JobStateName[] = ['pending', 'suspended'];
export const TERMINAL_STATES: readonly JobStateName[] = ['succeeded', 'failed', 'cancelled'];

export type AllocationKind = 'whole' | 'mig' | 'share';

/** What an allocation row holds, as takeGpuSlots writes it: a MIG slice, a whole GPU (1000 milli) or a share. */
export function kindOf(a: Pick<AllocationRow, 'migProfile' | 'milli'>): AllocationKind {
  if (a.migProfile !== null) return 'mig';
  return a.milli >= 1000 ? 'whole' : 'share';
}

/** The unique slot key takeGpuSlots sets while active (null for shares). */
export function expectedSlot(a: Pick<AllocationRow, 'gpuId' | 'migProfile' | 'migStart' | 'milli'>): string | null {
  return activeSlotKey(a);
}

export { groupBy } from '../common/group-by';
