import { z } from 'zod';

/** Utilization and chargeback: who uses which GPUs, how well, at what cost. */

export const UTILIZATION_GROUP_BY = ['team', 'gpuModel', 'node', 'tenant'] as const;
export const ZUtilizationGroupBy = z.enum(UTILIZATION_GROUP_BY);
export type UtilizationGroupBy = z.infer<typeof ZUtilizationGroupBy>;

/** The most points one answer may hold (buckets per series); more is a 400 naming this limit. */
export const MAX_UTILIZATION_POINTS = 2000;

/** The longest window one report may span, in days; longer is a 400 naming `from`. */
export const MAX_UTILIZATION_RANGE_DAYS = 90;

/** `90`, `60s`, `5m`, `1h`, `1d` -> seconds. */
export const ZStep = z
  .string()
  .regex(/^\d+(s|m|h|d)?$/, 'must be seconds or a duration such as 60s, 5m, 1h, 1d')
  .transform((s) => {
    const n = Number.parseInt(s, 10);
    const unit = s.replace(/^\d+/, '') || 's';
    return n * { s: 1, m: 60, h: 3600, d: 86400 }[unit as 's' | 'm' | 'h' | 'd'];
  });

export const ZUtilizationQuery = z
  .object({
    groupBy: ZUtilizationGroupBy.optional().describe('team | gpuModel | node | tenant; without it the answer is the capacity summary'),
    from: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 start (default: `to` minus 24 h)'),
    to: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 end (default: now)'),
    step: ZStep.optional().describe('bucket width: seconds or 60s, 5m, 1h, 1d; a multiple of 60 s'),
    format: z.enum(['json', 'csv']).optional().describe('csv: one line per group and bucket (chargeback export)'),
  })
  .strict();
export type UtilizationQuery = z.output<typeof ZUtilizationQuery>;

export const ZUtilizationPoint = z.object({
  /** Bucket start, ISO 8601. */
  t: z.string(),
  capacityGpuHours: z.number().nullable(),
  allocatedGpuHours: z.number(),
  busyGpuHours: z.number(),
  /** allocated / capacity, 0..1 (null when the caller cannot see the capacity). */
  allocationRatio: z.number().nullable(),
  /** Mean SM activity of the GPUs in the group (busy / capacity, or busy / allocated for teams), 0..1. */
  smRatio: z.number().nullable(),
  memoryUsedMiB: z.number(),
  energyKWh: z.number(),
  /** Allocated GPU-hours x price. */
  cost: z.number(),
  /** Allocated but idle: GPU-hours held on GPUs whose SM use was under the idle threshold (the Overview's rule). */
  idleGpuHours: z.number(),
});
export type UtilizationPoint = z.infer<typeof ZUtilizationPoint>;

export const ZUtilizationTotals = z.object({
  capacityGpuHours: z.number().nullable(),
  allocatedGpuHours: z.number(),
  busyGpuHours: z.number(),
  allocationRatio: z.number().nullable(),
  smRatio: z.number().nullable(),
  /** Measured energy (driver power samples). */
  energyKWh: z.number(),
  /** Estimated from each model's idle and busy watts. */
  energyEstimateKWh: z.number(),
  /** Allocated GPU-hours x the model's GPU-hour price (chargeback). */
  cost: z.number(),
  /** Allocated but idle: GPU-hours held on GPUs whose SM use was under the idle threshold (the Overview's rule). */
  idleGpuHours: z.number(),
});
export type UtilizationTotals = z.infer<typeof ZUtilizationTotals>;

/** groupBy=team only: what the team holds now against its quota (sums over flavours). */
export const ZTeamNow = z.object({
  allocatedGpus: z.number(),
  quotaGuaranteed: z.number().nullable(),
  quotaLimit: z.number().nullable(),
});
export type TeamNow = z.infer<typeof ZTeamNow>;

export const ZUtilizationSeries = z.object({
  key: z.string(),
  label: z.string(),
  now: ZTeamNow.optional(),
  totals: ZUtilizationTotals,
  points: z.array(ZUtilizationPoint),
});
export type UtilizationSeries = z.infer<typeof ZUtilizationSeries>;

export const ZGpuModelPrice = z.object({
  gpuModel: z.string(),
  pricePerGpuHour: z.number(),
  idleW: z.number(),
  busyW: z.number(),
});
export type GpuModelPrice = z.infer<typeof ZGpuModelPrice>;

export const ZUtilizationReport = z.object({
  groupBy: ZUtilizationGroupBy,
  from: z.string(),
  to: z.string(),
  stepSeconds: z.number().int(),
  /** Rollup read: `1m`, `1h` or `1d` (the largest that divides the step). */
  resolution: z.enum(['1m', '1h', '1d']),
  currency: z.string(),
  series: z.array(ZUtilizationSeries),
  totals: ZUtilizationTotals,
  prices: z.array(ZGpuModelPrice),
  /**
   * Energy power management saved in the window: the time nodes spent off x (their draw on and
   * idle - their draw off), kWh. Null for callers who cannot see the cluster (tenants).
   */
  energySavedKWh: z.number().nullable(),
});
export type UtilizationReport = z.infer<typeof ZUtilizationReport>;

/** A GPU that is allocated but idle (SM under the threshold for longer than the set time). */
export const ZIdleAllocation = z.object({
  gpuId: z.string(),
  nodeId: z.string(),
  nodeName: z.string(),
  gpuIndex: z.number().int(),
  gpuModel: z.string(),
  tenantId: z.string(),
  teamId: z.string(),
  teamName: z.string(),
  jobId: z.string().nullable(),
  jobName: z.string().nullable(),
  gpuUnits: z.number(),
  smPct: z.number(),
  idleSince: z.string(),
  idleSeconds: z.number(),
});
export type IdleAllocation = z.infer<typeof ZIdleAllocation>;

export const ZIdleQuery = z
  .object({
    minIdleSeconds: z.coerce
      .number()
      .int()
      .min(0)
      .max(30 * 86400)
      .optional()
      .describe('default: GANTRY_IDLE_MINUTES'),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();
export const ZIdleAllocations = z.object({
  smThresholdPct: z.number(),
  minIdleSeconds: z.number(),
  items: z.array(ZIdleAllocation),
});
export type IdleAllocations = z.infer<typeof ZIdleAllocations>;

/**
 * Live per-GPU state for the heatmap, column-oriented so that 8,000 GPUs stay small:
 * `gpus.node[i]` indexes `nodes`, `gpus.model[i]` indexes `models`; `smPct[i]` is null
 * when the GPU sent no sample; `allocated[i]` is the held part of the GPU (0..1);
 * `health[i]`: 0 healthy, 1 degraded, 2 unhealthy.
 */
export const ZGpuHeatmap = z.object({
  at: z.string().nullable(),
  nodes: z.array(z.string()),
  models: z.array(z.string()),
  gpus: z.object({
    id: z.array(z.string()),
    node: z.array(z.number().int()),
    index: z.array(z.number().int()),
    model: z.array(z.number().int()),
    smPct: z.array(z.number().nullable()),
    memoryPct: z.array(z.number().nullable()),
    powerW: z.array(z.number().nullable()),
    allocated: z.array(z.number()),
    health: z.array(z.number().int()),
  }),
});
export type GpuHeatmap = z.infer<typeof ZGpuHeatmap>;
