/**
 * Label and annotation keys: NVIDIA GPU Operator / GPU feature discovery, the AMD GPU Operator
 * (node labeller, device plugin, Device Config Manager; docs/accelerators.md), Topograph,
 * Kubernetes well-known labels, and Gantry's own (docs/reference/gpu.md section 2). The Kubernetes driver
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

/**
 * The AMD GPU Operator's node labeller (`amd.com/gpu.*`, partition labels) and Device Config
 * Manager (`dcm.amd.com/*`: the partition profile a node is asked for, and how it went).
 */
export const AMD_GPU_LABELS = {
  /** e.g. `AMD_Instinct_MI300X_OAM`. */
  productName: 'amd.com/gpu.product-name',
  /** e.g. `192G`. */
  vram: 'amd.com/gpu.vram',
  cuCount: 'amd.com/gpu.cu-count',
  family: 'amd.com/gpu.family',
  computePartitioningSupported: 'amd.com/compute-partitioning-supported',
  memoryPartitioningSupported: 'amd.com/memory-partitioning-supported',
  /** The node's partition mode when every GPU has the same one: `spx_nps1`, `cpx_nps4`... */
  computeMemoryPartition: 'amd.com/compute-memory-partition',
  configProfile: 'dcm.amd.com/gpu-config-profile',
  /** `success` | `failure` once the Device Config Manager has acted. */
  configProfileState: 'dcm.amd.com/gpu-config-profile-state',
} as const;

/**
 * Extended resources of the AMD device plugin: `amd.com/gpu` (strategy `single`: whole GPUs, or
 * every partition as one GPU), `amd.com/<compute>_<memory>` per partition (strategy `mixed`,
 * e.g. `amd.com/cpx_nps4`: the catalog's profile names).
 */
export const AMD_GPU_RESOURCE = 'amd.com/gpu';
export const amdPartitionResource = (profile: string): string => `amd.com/${profile}`;

/** Resources of either vendor's GPU device plugins. */
export const isGpuResourceName = (resource: string): boolean => resource.startsWith('nvidia.com/') || resource.startsWith('amd.com/');

/** Whose GPUs a node carries, from its discovery labels (NVIDIA unless the AMD labeller has been there). */
export function gpuVendorOfLabels(labels: Record<string, string> | undefined): 'nvidia' | 'amd' {
  return labels?.[AMD_GPU_LABELS.productName] !== undefined ? 'amd' : 'nvidia';
}
