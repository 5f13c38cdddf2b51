import { z } from 'zod';
import { ZGpuModel } from './cluster';
import { MIG_PROFILE_NAMES } from './gpu-catalog';

export const JOB_KINDS = ['training', 'batch', 'notebook', 'vm', 'cluster'] as const;
export const ZJobKind = z.enum(JOB_KINDS);
export type JobKind = z.infer<typeof ZJobKind>;

export const JOB_STATES = ['pending', 'starting', 'running', 'suspending', 'suspended', 'succeeded', 'failed', 'cancelled'] as const;
export const ZJobState = z.enum(JOB_STATES);
export type JobState = z.infer<typeof ZJobState>;
export const TERMINAL_JOB_STATES: readonly JobState[] = ['succeeded', 'failed', 'cancelled'];

export const PRIORITIES = ['critical', 'high', 'normal', 'low'] as const;
export const ZPriority = z.enum(PRIORITIES);
export type Priority = z.infer<typeof ZPriority>;
/** Numeric value of a priority class: higher is scheduled first. */
export const PRIORITY_VALUE: Record<Priority, number> = { critical: 1000, high: 100, normal: 50, low: 10 };

export const TOPOLOGY_LEVELS = ['node', 'leaf', 'spine', 'any'] as const;
export const ZTopologyLevel = z.enum(TOPOLOGY_LEVELS);
export type TopologyLevel = z.infer<typeof ZTopologyLevel>;

/**
 * A MIG-shaped name (an unknown one is the engine's to refuse, naming the models) or any other
 * partition profile of the GPU catalog (an AMD mode such as 'cpx_nps4').
 */
const MIG_PROFILE_PATTERN = new RegExp(
  `^(?:[1-7]g\\.\\d+gb(?:\\+me)?|${MIG_PROFILE_NAMES.filter((n) => !/^[1-7]g\./.test(n))
    .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|')})$`,
);

/**
 * Per-replica resources: exactly one of `gpus` (whole GPUs), `migProfile` (one MIG slice)
 * or `gpuFraction` (a share of one GPU, in (0, 1)).
 */
export const ZJobResources = z
  .object({
    gpus: z.number().int().min(1).max(64).optional(),
    migProfile: z.string().regex(MIG_PROFILE_PATTERN, 'must look like "1g.10gb" or be a partition profile of the GPU catalog (e.g. "cpx_nps4")').optional(),
    gpuFraction: z.number().gt(0).lt(1).optional(),
    gpuModel: ZGpuModel.optional(),
    cpuMilli: z.number().int().min(0).max(1_024_000).default(4000),
    memoryMiB: z.number().int().min(0).max(8_388_608).default(16384),
  })
  .strict()
  .superRefine((r, ctx) => {
    const set = [r.gpus !== undefined, r.migProfile !== undefined, r.gpuFraction !== undefined].filter(Boolean).length;
    if (set !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'exactly one of gpus, migProfile or gpuFraction is required',
        path: [],
      });
    }
  });
export type JobResources = z.infer<typeof ZJobResources>;

export const ZJobTopology = z.object({ level: ZTopologyLevel.default('any'), required: z.boolean().default(false) }).strict();
export type JobTopology = z.infer<typeof ZJobTopology>;

export const ZJobCreate = z
  .object({
    teamId: z.string().min(1).max(64),
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must start with a letter or digit and use letters, digits, ".", "_" or "-"'),
    kind: ZJobKind,
    priority: ZPriority.default('normal'),
    replicas: z.number().int().min(1).max(512).default(1),
    resources: ZJobResources,
    topology: ZJobTopology.default({ level: 'any', required: false }),
    preemptible: z.boolean().default(false),
    simulation: z
      .object({ durationSeconds: z.number().positive().max(31_536_000) })
      .strict()
      .optional(),
  })
  .strict();
export type JobCreate = z.input<typeof ZJobCreate>;
export type JobCreateParsed = z.output<typeof ZJobCreate>;

export const ZPlacementGpu = z.object({
  gpuId: z.string(),
  index: z.number().int(),
  migProfile: z.string().optional(),
  migStart: z.number().int().optional(),
  fraction: z.number().optional(),
});
export const ZPlacement = z.object({
  replica: z.number().int(),
  nodeId: z.string(),
  nodeName: z.string(),
  gpus: z.array(ZPlacementGpu),
});
export type Placement = z.infer<typeof ZPlacement>;

export const ZReason = z.object({ code: z.string(), message: z.string() });
export type Reason = z.infer<typeof ZReason>;

export const ZJobEvent = z.object({
  id: z.string(),
  type: z.string(),
  message: z.string(),
  createdAt: z.string(),
});

export const ZJob = z.object({
  id: z.string(),
  teamId: z.string(),
  name: z.string(),
  kind: ZJobKind,
  state: ZJobState,
  priority: ZPriority,
  replicas: z.number().int(),
  resources: z.object({
    gpus: z.number().int().optional(),
    migProfile: z.string().optional(),
    gpuFraction: z.number().optional(),
    gpuModel: z.string().optional(),
    cpuMilli: z.number().int(),
    memoryMiB: z.number().int(),
  }),
  topology: z.object({ level: ZTopologyLevel, required: z.boolean() }),
  preemptible: z.boolean(),
  placement: z.array(ZPlacement),
  /** Where a job that holds no GPUs now last ran (the GPUs released at the end of its last run); absent if it never ran. */
  ranOn: z.array(ZPlacement).optional(),
  reasons: z.array(ZReason),
  queuePosition: z.number().int().optional(),
  progress: z.number().min(0).max(1).optional(),
  /** The simulated work asked for at submission (absent: runs until stopped); lets a job be cloned as it was. */
  simulation: z.object({ durationSeconds: z.number() }).optional(),
  createdAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});
export type Job = z.infer<typeof ZJob>;

export const ZJobDetail = ZJob.extend({ events: z.array(ZJobEvent) });
export type JobDetail = z.infer<typeof ZJobDetail>;

export const ZJobListQuery = z
  .object({
    teamId: z.string().max(64).optional(),
    state: ZJobState.optional(),
  })
  .strict();

/** `GET /v1/jobs/summary`: what the console's Overview shows of the jobs, without listing them all. */
export const ZJobsSummaryQuery = z.object({ teamId: z.string().max(64).optional() }).strict();

export const ZJobsSummary = z.object({
  /** Jobs in each state, every state present (0 when none). */
  counts: z.object(Object.fromEntries(JOB_STATES.map((s) => [s, z.number().int()])) as Record<JobState, z.ZodNumber>),
  /**
   * The first pending jobs in queue order (at most `QUEUE_HEAD_SIZE`), each with its `queuePosition`:
   * the queue as last ordered (at most about a second before when the API is quiet).
   */
  queueHead: z.array(ZJob),
});
export type JobsSummary = z.infer<typeof ZJobsSummary>;
export const QUEUE_HEAD_SIZE = 8;

/** `POST /v1/teams/:id/suspend`: the team's jobs that were suspended (or are checkpointing). */
export const ZTeamSuspendResult = z.object({ suspended: z.number().int(), jobIds: z.array(z.string()) });
export type TeamSuspendResult = z.infer<typeof ZTeamSuspendResult>;

/** `POST /v1/teams/:id/resume`: the team's suspended jobs that were requeued. */
export const ZTeamResumeResult = z.object({ resumed: z.number().int(), jobIds: z.array(z.string()) });
export type TeamResumeResult = z.infer<typeof ZTeamResumeResult>;

/** One line a job's replica wrote; `stream` `gantry` is a note from Gantry (a log the cluster could not give). */
export const ZJobLogLine = z.object({
  at: z.string(),
  replica: z.number().int(),
  seq: z.string(),
  stream: z.enum(['stdout', 'stderr', 'gantry']),
  text: z.string(),
});
export type JobLogLine = z.infer<typeof ZJobLogLine>;

export const ZJobLogs = z.object({
  jobId: z.string(),
  state: ZJobState,
  /** Oldest first: the newest `tail` lines at or after `since`. */
  lines: z.array(ZJobLogLine),
  /** True when older lines matched than `tail` lets through. */
  truncated: z.boolean(),
});
export type JobLogs = z.infer<typeof ZJobLogs>;

export const ZJobLogsQuery = z
  .object({
    /** The newest this many lines (default 500). */
    tail: z.coerce.number().int().min(1).max(5000).optional(),
    /** Only lines written at or after this instant (ISO 8601): follow a running job with the last line's time. */
    since: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
