import { z } from 'zod';
import { PERSONAS } from './gpu-catalog';
import { ZNodeBareMetal, ZTimelineEvent } from './bare-metal';

export const ZGpuModel = z.string().min(1).max(64);

export const ZPersona = z.enum(PERSONAS);

export const NODE_STATES = ['ready', 'cordoned', 'draining', 'switching', 'down'] as const;
export const ZNodeState = z.enum(NODE_STATES);
/** Power state of a node (power management, docs/power.md): only `on` nodes take work. */
export const NODE_POWER_STATES = ['on', 'powering-down', 'off', 'powering-up'] as const;
export const ZNodePowerState = z.enum(NODE_POWER_STATES);
export type NodePowerState = z.infer<typeof ZNodePowerState>;
export type NodeState = z.infer<typeof ZNodeState>;

export const GPU_HEALTH = ['healthy', 'degraded', 'unhealthy'] as const;
export const ZGpuHealth = z.enum(GPU_HEALTH);
export type GpuHealth = z.infer<typeof ZGpuHealth>;

export const GPU_MODES = ['whole', 'mig', 'shared'] as const;
export const ZGpuMode = z.enum(GPU_MODES);
export type GpuMode = z.infer<typeof ZGpuMode>;

export const ZMigSlice = z.object({
  profile: z.string(),
  start: z.number().int(),
  size: z.number().int(),
  jobId: z.string().optional(),
});
export type MigSlice = z.infer<typeof ZMigSlice>;

/** A node's transition in progress: a drain, a persona switch or a remediation. */
export const ZNodeTransition = z.object({
  kind: z.enum(['drain', 'persona-switch', 'remediation']),
  /** Persona being switched to (persona-switch). */
  persona: ZPersona.optional(),
  startedAt: z.string(),
  /** Expected end; absent when unknown. */
  etaAt: z.string().nullable(),
  /** 0..1, from the elapsed time over the expected duration (or jobs drained so far). */
  progress: z.number().min(0).max(1),
  /** Jobs still on the node (drain). */
  jobsLeft: z.number().int().optional(),
});
export type NodeTransition = z.infer<typeof ZNodeTransition>;

export const ZGpu = z.object({
  id: z.string(),
  nodeId: z.string(),
  index: z.number().int(),
  model: z.string(),
  memoryMiB: z.number().int(),
  nvlinkDomain: z.number().int(),
  health: ZGpuHealth,
  mode: ZGpuMode,
  jobId: z.string().optional(),
  mig: z.object({ layout: z.array(ZMigSlice) }).optional(),
  sharedMilliUsed: z.number().int().optional(),
  /** False while a MIG change is applied (the GPU takes no new work) or the GPU is quarantined. */
  schedulable: z.boolean(),
  /** The MIG layout being applied, while a change is in flight ([] = MIG off). */
  migTarget: z.array(z.object({ profile: z.string(), start: z.number().int() })).optional(),
});
export type Gpu = z.infer<typeof ZGpu>;

export const ZNode = z.object({
  id: z.string(),
  name: z.string(),
  leaf: z.string(),
  spine: z.string(),
  persona: ZPersona,
  state: ZNodeState,
  /** Power state: off and powering nodes take no work (docs/power.md). */
  powerState: ZNodePowerState,
  cpuMilli: z.number().int(),
  memoryMiB: z.number().int(),
  gpuModel: z.string().nullable(),
  gpuCount: z.number().int(),
  gpusAllocated: z.number(),
  heartbeatAt: z.string().nullable(),
  labels: z.record(z.string(), z.string()),
  /** Why the node is not ready (cordon reason, fault, drain, persona switch). */
  stateReason: z.string().nullable(),
  /** Persona being switched to while `switching`. */
  personaTarget: ZPersona.nullable(),
  /** Drain, persona switch or remediation in progress, with progress and ETA. */
  transition: ZNodeTransition.nullable(),
  /** Held by a bare-metal lease (docs/bare-metal.md): its node step; the lease and team only for callers who may see them. */
  bareMetal: ZNodeBareMetal.nullable(),
});
export type Node = z.infer<typeof ZNode>;

export const ZNodeDetail = ZNode.extend({
  gpus: z.array(ZGpu),
  /** The node's latest events the caller may see (its own tenant's and cluster-wide ones), oldest first. */
  events: z.array(ZTimelineEvent),
});
export type NodeDetail = z.infer<typeof ZNodeDetail>;

export const ZNodeListQuery = z
  .object({
    leaf: z.string().max(100).optional(),
    state: ZNodeState.optional(),
    gpuModel: z.string().max(64).optional(),
  })
  .strict();
export const ZGpuListQuery = z
  .object({
    nodeId: z.string().max(64).optional(),
    model: z.string().max(64).optional(),
    health: ZGpuHealth.optional(),
  })
  .strict();

/** Capacity summary by GPU model (the Overview page). */
export const ZCapacityRow = z.object({
  gpuModel: z.string(),
  total: z.number(),
  allocated: z.number(),
  free: z.number(),
  unhealthy: z.number(),
});
export const ZCapacity = z.object({ byModel: z.array(ZCapacityRow) });
export type Capacity = z.infer<typeof ZCapacity>;
