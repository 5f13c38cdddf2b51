/**
 * The ClusterDriver: the only way Gantry touches a cluster (docs/design.md section 6).
 * Nodes are addressed by name (stable across restarts and drivers); GPUs by node + index.
 */

import type { Persona } from '@gantry/contracts';

export type { Persona } from '@gantry/contracts';

export interface MigSliceSpec {
  profile: string;
  start: number;
}

export interface InventoryGpu {
  index: number;
  model: string;
  memoryMiB: number;
  nvlinkDomain: number;
  migCapable: boolean;
  /** Current MIG layout; empty = MIG off (whole GPU). */
  migLayout: MigSliceSpec[];
  /** `unhealthy` after a critical Xid until recovered; undefined when the driver cannot tell. */
  health?: 'healthy' | 'unhealthy';
}

export interface InventoryNode {
  name: string;
  leaf: string;
  spine: string;
  cpuMilli: number;
  memoryMiB: number;
  persona: Persona;
  labels: Record<string, string>;
  gpus: InventoryGpu[];
  /** Cordoned (`spec.unschedulable`). */
  unschedulable?: boolean;
  /** False while the node is down (no heartbeat, Kubernetes `Ready` condition not true). */
  ready?: boolean;
  /** False while the node's network interface is down (a NIC fault, or a NIC health condition on Kubernetes). */
  networkUp?: boolean;
  /**
   * GPU resources held on the node by pods Gantry did not create (Kubernetes driver): extended
   * resource -> amount, e.g. `{ 'nvidia.com/gpu': 2 }`. That capacity is in use: the driver
   * refuses to start a replica that does not fit beside it.
   */
  externalGpuUse?: Record<string, number>;
  /** Power state as the driver knows it (simulated: its BMC; Kubernetes: the gantry.dev/power-state label); undefined = on. */
  powerState?: NodePowerState;
}

/** A node's power: on, off, or on its way between the two (docs/power.md). */
export type NodePowerState = 'on' | 'powering-down' | 'off' | 'powering-up';

export interface Inventory {
  nodes: InventoryNode[];
}

export interface ReplicaSpec {
  replica: number;
  nodeName: string;
  gpus: { index: number; migProfile?: string; migStart?: number; milli?: number }[];
}

export interface StartRequest {
  jobId: string;
  kind: string;
  replicas: ReplicaSpec[];
  /** Simulated work in seconds of progress; undefined = runs until stopped. */
  durationSeconds?: number;
  /** Progress already made (resume after suspend, or re-attach after a worker restart). */
  progressSeconds?: number;
  /** Opaque checkpoint reference returned by suspend(). */
  checkpoint?: string;
  /** Container image (Kubernetes driver); the driver's default image when absent. */
  image?: string;
  /** Container command (Kubernetes driver), e.g. a DCGM diagnostic; the image's own when absent. */
  command?: string[];
}

/** How one start of a startMany() went: started (or already running), or refused with the reason. */
export type StartOutcome = { jobId: string; ok: true } | { jobId: string; ok: false; error: Error };

export interface WorkloadStatus {
  state: 'running' | 'exited' | 'unknown';
  progressSeconds: number;
  exitCode?: number;
  /** True while the replicas are still starting (progress has not begun yet). */
  starting?: boolean;
  /** Why an exited job ended (when the driver knows): failover tells a lost job from a failed one. */
  reason?: JobExitReason;
  /**
   * What the workload said when it ended (Kubernetes: the container's termination message). A
   * `burn-in` workload reports one line per GPU there (see shared/burn-in.ts).
   */
  message?: string;
}

/**
 * Why a job exited. `completed`/`failed` come from the workload itself; the others are
 * the cluster taking it away (a drain, a lost node, a GPU fault).
 */
export type JobExitReason = 'completed' | 'failed' | 'evicted' | 'node-lost' | 'gpu-fault';

export type DriverEvent =
  | { type: 'job-exited'; jobId: string; exitCode: number; at: number; reason?: JobExitReason }
  | { type: 'xid'; nodeName: string; gpuIndex: number; xid: number; at: number }
  | { type: 'nic-down' | 'nic-up'; nodeName: string; at: number }
  | { type: 'node-down' | 'node-up'; nodeName: string; at: number }
  /**
   * Nodes alive at `at`: every node that beat at that moment, in one event (a cluster of
   * 10,000 nodes sends one event per beat, not 10,000; like a list of renewed node leases).
   */
  | { type: 'heartbeat'; nodeNames: string[]; at: number };

/**
 * A fault to inject into a simulated cluster (`POST /v1/sim/faults`). `latent`: a defect idle
 * health checks miss (the GPU reports healthy); it shows under load: a `burn-in` diagnostic on the
 * GPU fails, other work on it ends with Xid 79 after a while. Resets and reboots do not cure it;
 * `recover` does (the part was replaced).
 */
export interface FaultInjection {
  nodeName: string;
  /** Required for `xid` and `latent`; for `recover`, restricts GPU recovery to one GPU. */
  gpuIndex?: number;
  /** `power-up-fail`: the node's next power-on fails (it stays off). `latent`: a GPU defect only load shows. */
  kind: 'xid' | 'nic-down' | 'node-down' | 'recover' | 'power-up-fail' | 'latent';
  /** Xid code for `xid` (default 79, GPU fallen off the bus). */
  xid?: number;
}

/**
 * One bare-metal step on a whole node (docs/bare-metal.md): write the image and boot it
 * (`provision`), power off or on keeping the disk (suspend / resume), wipe the disk and give
 * the node back (`deprovision`).
 */
export type BareMetalOperation =
  { action: 'provision'; leaseId: string; image: string } | { action: 'power-off' | 'power-on' | 'deprovision'; leaseId: string };

/** Where a node is in its bare-metal life, as the driver saw it last (for tests and the sim's control API). */
export type BareMetalNodeStatus = 'provisioning' | 'deployed' | 'powering-off' | 'powered-off' | 'powering-on' | 'deprovisioning';
/** One line a job's workload wrote (stdout/stderr of one replica). */
export interface JobLogLine {
  /** When it was written (ms since the epoch). */
  at: number;
  replica: number;
  /** Orders the lines of one replica; the same line read twice has the same seq (dedupe key). */
  seq: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface JobLogQuery {
  /** Only lines written at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** At most this many lines per replica, the newest. */
  tailLines?: number;
}

/** What the driver could read: the lines, and per replica why it could not read more. */
/** One job's part of a logsMany() call. */
export interface JobLogRequest {
  jobId: string;
  query?: JobLogQuery;
}

export interface JobLogs {
  lines: JobLogLine[];
  /** Replicas whose log could not be read, with the reason (e.g. no kubelet answered). */
  unavailable: { replica: number; reason: string }[];
}

export interface GpuMetricSample {
  nodeName: string;
  gpuIndex: number;
  at: number;
  smPct: number;
  memoryUsedMiB: number;
  powerW: number;
}

export interface ClusterDriver {
  readonly name: 'simulated' | 'kubernetes';
  discover(): Promise<Inventory>;
  /**
   * One node as discover() lists it, or undefined when the driver has no such node (nor GPU
   * discovery labels on it). What a step on one node reads (a MIG change, a persona switch, a
   * failover check), at the cost of one node rather than of the whole cluster.
   */
  discoverNode(nodeName: string): Promise<InventoryNode | undefined>;
  /** Resolves once the layout is applied and verified. */
  applyMigLayout(nodeName: string, gpuIndex: number, layout: MigSliceSpec[]): Promise<void>;
  /** Resolves once the node runs the new persona. */
  setPersona(nodeName: string, persona: Persona): Promise<void>;
  cordon(nodeName: string): Promise<void>;
  uncordon(nodeName: string): Promise<void>;
  /** Evicts every workload of the node; each evicted job emits `job-exited` (reason `evicted`). */
  drain(nodeName: string): Promise<void>;
  /**
   * Powers a node off (it must hold no work; it is cordoned first) or on; resolves once it is off,
   * or on and ready. Rejects when the node does not come up (it is left off). Idempotent.
   */
  setPower(nodeName: string, state: 'on' | 'off'): Promise<void>;
  /** Idempotent: starting a job that already runs is a no-op. */
  start(req: StartRequest): Promise<void>;
  /**
   * start() of many jobs at once, as the driver does them best (in parallel, bounded); one
   * outcome per request, in order. A refusal fails only its own request.
   */
  startMany(requests: readonly StartRequest[]): Promise<StartOutcome[]>;
  /** Idempotent: stopping an unknown job is a no-op. Emits no `job-exited` (the caller asked). */
  stop(jobId: string): Promise<void>;
  /**
   * Optional: stop() of many jobs in one call (the runs of a batch of jobs that ended), one entry
   * per id in the order asked: null when stopped, else why not. Without it callers use stopEach()
   * (shared/stop-many.ts), which stops each.
   */
  stopMany?(jobIds: readonly string[]): Promise<(Error | null)[]>;
  /** Checkpoints and stops the job (no `job-exited` event); resume with start({ progressSeconds, checkpoint }). */
  suspend(jobId: string): Promise<{ checkpoint: string; progressSeconds: number }>;
  status(jobId: string): Promise<WorkloadStatus>;
  /**
   * Optional: status() of many jobs in one call (a reconciliation round), one per id in the order
   * asked. Without it callers use statusOfMany() (shared/status-many.ts), which asks each.
   */
  statusMany?(jobIds: readonly string[]): Promise<WorkloadStatus[]>;
  /**
   * Optional: status() once the workload is no longer starting (it serves, or it ended), or as it
   * is after `timeoutMs` real milliseconds. Without it a caller waiting for a start polls status().
   */
  untilStarted?(jobId: string, timeoutMs: number): Promise<WorkloadStatus>;
  /** Subscribes to health and workload events; returns an unsubscribe function. */
  onEvent(listener: (e: DriverEvent) => void): () => void;
  metrics(): Promise<GpuMetricSample[]>;
  /**
   * Optional: what the job's replicas wrote (simulated: generated from the workload's own
   * progress; Kubernetes: the pods' logs). A job the driver does not know has no lines.
   */
  logs?(jobId: string, query?: JobLogQuery): Promise<JobLogs>;
  /**
   * Optional: logs() of many jobs in one call (the worker's log collection round), one answer per
   * request in order; null where that job's log could not be read. Without it callers use
   * logsOfMany() (shared/logs-many.ts), which asks each.
   */
  logsMany?(requests: readonly JobLogRequest[]): Promise<(JobLogs | null)[]>;
  close(): Promise<void>;
  /**
   * Optional (drivers of clusters shared with other workloads: Kubernetes): the GPU resources
   * held now, per node, by workloads Gantry did not start (as `externalGpuUse` in discover()),
   * cheap enough to ask every few seconds. Nodes without such use are absent.
   */
  gpuUseByOthers?(): Promise<Map<string, Record<string, number>>>;
  /** Only drivers that can fake hardware faults implement this (the simulated driver). */
  injectFault?(fault: FaultInjection): Promise<void>;
  /**
   * Remediation (optional): resets one GPU (no process may run on it) and resolves once the
   * reset is done. Whether the GPU came back healthy is read with discover().
   */
  resetGpu?(nodeName: string, gpuIndex: number): Promise<void>;
  /** Remediation (optional): reboots a node (power cycle through its BMC); resolves once it is back. */
  rebootNode?(nodeName: string): Promise<void>;
  /**
   * Bare metal (optional): runs one step on a whole node and resolves once it is done. The node
   * leaves the container pool on `provision` (cordoned) and comes back on `deprovision`.
   * Idempotent: a step asked again while it runs (or once it is done) waits for the same end.
   */
  bareMetal?(nodeName: string, op: BareMetalOperation): Promise<void>;
}
