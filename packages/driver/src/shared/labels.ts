/**
 * Label and annotation keys: NVIDIA GPU Operator / GPU feature discovery, Topograph, Kubernetes
 * well-known labels, and Gantry's own (docs/reference/gpu.md section 2). The Kubernetes driver
 * reads and writes them; the simulated driver labels its nodes the same way.
 */

export const GPU_LABELS = {
  product: 'nvidia.com/gpu.product',
  count: 'nvidia.com/gpu.count',
  memoryMiB: 'nvidia.com/gpu.memory',
  migCapable: 'nvidia.com/mig.capable',
  migConfig: 'nvidia.com/mig.config',
  migConfigState: 'nvidia.com/mig.config.state',
  workloadConfig: 'nvidia.com/gpu.workload.config',
} as const;

export const TOPOLOGY_LABELS = {
  /** Topograph: tier 0 is the switch closest to the node (the leaf). */
  leaf: 'fabric.topograph.run/tier-0',
  spine: 'fabric.topograph.run/tier-1',
  zone: 'topology.kubernetes.io/zone',
  region: 'topology.kubernetes.io/region',
} as const;

export const GANTRY_LABELS = {
  jobId: 'gantry.io/job-id',
  replica: 'gantry.io/replica',
  /** Gantry persona when the operator's workload config cannot say it (`inference`). */
  persona: 'gantry.io/persona',
  /** Power state Gantry set (on, powering-down, off, powering-up): the node is cordoned unless on (docs/power.md). */
  powerState: 'gantry.io/power-state',
} as const;

export const GANTRY_ANNOTATIONS = {
  /** JSON `{ "<gpu index>": [{ profile, start }] }`: the MIG layouts Gantry asked for. */
  migLayouts: 'gantry.io/mig-layouts',
  jobKind: 'gantry.io/job-kind',
  durationSeconds: 'gantry.io/duration-seconds',
  progressSeconds: 'gantry.io/progress-seconds',
  checkpoint: 'gantry.io/checkpoint',
  /**
   * Written on the pod by the workload when SIGTERM asks it to stop (a suspend or a drain), before
   * it exits: JSON `{ "checkpoint": "<reference>", "progressSeconds": n, "at": "<RFC 3339>" }`.
   */
  checkpointSaved: 'gantry.io/checkpoint-saved',
} as const;

/** Extended resources advertised by the NVIDIA device plugin (MIG strategy `mixed`). */
export const GPU_RESOURCE = 'nvidia.com/gpu';
export const SHARED_GPU_RESOURCE = 'nvidia.com/gpu.shared';
export const migResource = (profile: string): string => `nvidia.com/mig-${profile}`;
