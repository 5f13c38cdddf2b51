import { z } from 'zod';

/** The what-if planner (docs/planner.md): a run replays a workload on a cluster under several policies. */
export const PLANNER_POLICIES = ['gantry', 'fgd', 'best-fit', 'kubernetes-default'] as const;
export const PLANNER_OPENB_TRACES = ['default', 'cpu050', 'gpushare40', 'gpuspec10'] as const;

/** A CSV is sent inline; 8 MB holds the openb default trace (about 0.6 MB) many times. */
const ZCsv = z.string().min(1).max(8_000_000);

export const ZPlannerWorkload = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('openb'), trace: z.enum(PLANNER_OPENB_TRACES) }).strict(),
  /** An openb-format pod list: name, cpu_milli, memory_mib, num_gpu, gpu_milli, creation_time, deletion_time (gpu_spec, scheduled_time optional). */
  z.object({ kind: z.literal('csv'), csv: ZCsv }).strict(),
  z
    .object({
      kind: z.literal('generator'),
      jobs: z.number().int().min(1).max(50_000),
      meanInterarrivalSeconds: z.number().positive().max(86_400),
      meanDurationSeconds: z
        .number()
        .positive()
        .max(30 * 86_400),
      mix: z.object({ share: z.number().min(0), whole: z.number().min(0), multi: z.number().min(0) }).strict(),
      seed: z
        .number()
        .int()
        .min(0)
        .max(2 ** 31)
        .default(42),
    })
    .strict(),
  /**
   * The cluster's own job history: the jobs submitted in the last `days` days that ran (or run
   * now), with their recorded run times. A tenant admin plans with its own tenant's jobs only.
   */
  z.object({ kind: z.literal('history'), days: z.number().int().min(1).max(365) }).strict(),
]);

export const ZPlannerCluster = z.discriminatedUnion('kind', [
  /** The 1,213-node openb cluster; `size` keeps its first nodes. */
  z.object({ kind: z.literal('openb'), size: z.number().int().min(1).max(1213).optional() }).strict(),
  /** An openb-format node list: sn, cpu_milli, memory_mib, gpu, model. */
  z.object({ kind: z.literal('csv'), csv: ZCsv }).strict(),
  /** The live inventory: every node with its GPUs as the cluster has them now. */
  z.object({ kind: z.literal('inventory') }).strict(),
  /** A topology file (the simulated cluster's format, docs/ARCHITECTURE.md): its JSON text. */
  z.object({ kind: z.literal('topology'), json: ZCsv }).strict(),
]);

export const ZPlannerRunCreate = z
  .object({
    workload: ZPlannerWorkload,
    cluster: ZPlannerCluster,
    /** What-if edits: add (count > 0) or remove (count < 0) nodes of a GPU model. */
    edits: z
      .array(z.object({ model: z.string().min(1).max(40), count: z.number().int().min(-10_000).max(10_000) }).strict())
      .max(20)
      .default([]),
    /**
     * What-if MIG policy: every GPU of `model` carries this MIG layout (NVIDIA's geometry; an
     * empty layout turns MIG off). MIG requests run on matching free slices only.
     */
    mig: z
      .array(
        z
          .object({
            model: z.string().min(1).max(40),
            layout: z.array(z.object({ profile: z.string().min(1).max(20), start: z.number().int().min(0).max(7) }).strict()).max(7),
          })
          .strict(),
      )
      .max(10)
      .default([]),
    policies: z
      .array(z.enum(PLANNER_POLICIES))
      .min(1)
      .max(4)
      .default([...PLANNER_POLICIES]),
    /** Power management for the policies that have it; null turns it off. */
    power: z
      .object({
        idleSeconds: z
          .number()
          .min(0)
          .max(7 * 86_400),
        headroom: z.number().min(0).max(1),
        bootSeconds: z.number().min(0).max(3600),
        shutdownSeconds: z.number().min(0).max(3600),
      })
      .strict()
      .nullable()
      .optional(),
    /** Arrivals this many times faster (1 = as recorded). */
    compress: z.number().positive().max(10_000).default(1),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31)
      .default(42),
  })
  .strict();
export type PlannerRunCreate = z.input<typeof ZPlannerRunCreate>;
export type PlannerRunSpec = z.output<typeof ZPlannerRunCreate>;

export const ZPlannerRunStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']);

const ZSeriesPoint = z.object({
  t: z.number(),
  allocationPct: z.number(),
  smUtilisationPct: z.number(),
  memoryUsePct: z.number(),
  powerKW: z.number(),
  gpusOn: z.number(),
  queued: z.number(),
});

export const ZPlannerPolicyResult = z.object({
  policy: z.enum(PLANNER_POLICIES),
  powerManagement: z.boolean(),
  jobs: z.number(),
  placed: z.number(),
  unplaced: z.number(),
  neverFits: z.number(),
  gpuAllocationPct: z.number(),
  gpuUtilisationPct: z.number(),
  gpuMemoryUsePct: z.number(),
  clusterSmUtilisationPct: z.number(),
  smPerBusyGpuPct: z.number(),
  memoryPerBusyGpuPct: z.number(),
  energyKWh: z.number(),
  energyWithoutPowerManagementKWh: z.number().nullable(),
  waitP50Seconds: z.number(),
  waitP95Seconds: z.number(),
  waitMaxSeconds: z.number(),
  fragmentationPct: z.number().nullable(),
  powerDowns: z.number(),
  powerUps: z.number(),
  series: z.array(ZSeriesPoint),
  /** Upper bound in seconds (-1: no bound) and count. */
  waitHistogram: z.array(z.object({ le: z.number(), count: z.number() })),
  cpuSeconds: z.number(),
});

export const ZPlannerResult = z.object({
  horizonSeconds: z.number(),
  nodes: z.number(),
  gpus: z.number(),
  jobs: z.number(),
  power: z.object({ idleSeconds: z.number(), headroom: z.number(), bootSeconds: z.number(), shutdownSeconds: z.number() }).nullable(),
  policies: z.array(ZPlannerPolicyResult),
  gantryVsKubernetesDefault: z.object({ gpuUtilisationPct: z.number(), gpuMemoryUsePct: z.number(), energyKWh: z.number() }).nullable(),
});
export type PlannerResult = z.infer<typeof ZPlannerResult>;

export const ZPlannerRun = z.object({
  id: z.string(),
  status: ZPlannerRunStatus,
  /** 0..1 */
  progress: z.number(),
  /** Why it failed or was cancelled. */
  error: z.string().nullable(),
  policies: z.array(z.enum(PLANNER_POLICIES)),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  result: ZPlannerResult.nullable(),
});
export type PlannerRun = z.infer<typeof ZPlannerRun>;
