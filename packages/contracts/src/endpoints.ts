import { z } from 'zod';
import { ZJobResources } from './jobs';

/**
 * Inference endpoints: replicas are allocations placed by the same engine as jobs
 * and count against the team's quota. Autoscaling follows Knative's defaults (docs/reference/gpu.md section 5).
 */
const ZEndpointName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must start with a letter or digit and use letters, digits, ".", "_" or "-"');

const ZEndpointSettings = z.object({
  /** 0 = scale to zero when idle. */
  minReplicas: z.number().int().min(0).max(64),
  maxReplicas: z.number().int().min(1).max(64),
  /** In-flight requests one replica is meant to hold (Knative's container concurrency target). */
  targetConcurrency: z.number().int().min(1).max(10_000),
  /** Seconds without a request before the last replica is stopped (minReplicas 0 only). */
  scaleToZeroAfterSeconds: z.number().int().min(1).max(86_400),
  /** Pre-staged replicas (placed, model loaded) kept for fast starts; they count against quota. */
  warmPool: z.number().int().min(0).max(8),
});

const minWithinMax = (v: { minReplicas?: number; maxReplicas?: number }, ctx: z.RefinementCtx) => {
  if (v.minReplicas !== undefined && v.maxReplicas !== undefined && v.minReplicas > v.maxReplicas) {
    ctx.addIssue({ code: 'custom', path: ['minReplicas'], message: `minReplicas (${v.minReplicas}) must not exceed maxReplicas (${v.maxReplicas})` });
  }
};

export const ZEndpointCreate = z
  .object({
    teamId: z.string().min(1).max(64),
    name: ZEndpointName,
    /** The model or container image the endpoint serves. */
    model: z.string().trim().min(1).max(200),
    resources: ZJobResources,
    minReplicas: ZEndpointSettings.shape.minReplicas.default(0),
    maxReplicas: ZEndpointSettings.shape.maxReplicas.default(1),
    targetConcurrency: ZEndpointSettings.shape.targetConcurrency.default(100),
    scaleToZeroAfterSeconds: ZEndpointSettings.shape.scaleToZeroAfterSeconds.default(60),
    warmPool: ZEndpointSettings.shape.warmPool.default(0),
  })
  .strict()
  .superRefine(minWithinMax);
export type EndpointCreate = z.input<typeof ZEndpointCreate>;
export type EndpointCreateParsed = z.output<typeof ZEndpointCreate>;

export const ZEndpointUpdate = ZEndpointSettings.extend({ model: z.string().trim().min(1).max(200) })
  .partial()
  .strict()
  .superRefine(minWithinMax);
export type EndpointUpdate = z.infer<typeof ZEndpointUpdate>;

export const ZEndpointScale = z.object({ replicas: z.number().int().min(0).max(1000) }).strict();
export type EndpointScale = z.infer<typeof ZEndpointScale>;

export const ZEndpointInvoke = z.object({ input: z.string().max(100_000).optional() }).strict();
export type EndpointInvoke = z.infer<typeof ZEndpointInvoke>;

export const ZEndpointInvokeResult = z.object({
  endpointId: z.string(),
  replica: z.number().int(),
  output: z.string(),
  /** True when the request arrived at zero serving replicas and waited for one. */
  coldStart: z.boolean(),
  /** Time the activator held the request (0 on a warm path). */
  waitedMs: z.number(),
});
export type EndpointInvokeResult = z.infer<typeof ZEndpointInvokeResult>;

export const ZColdStartStats = z.object({
  count: z.number().int(),
  p50Ms: z.number().nullable(),
  p95Ms: z.number().nullable(),
  lastMs: z.number().nullable(),
});
export type ColdStartStats = z.infer<typeof ZColdStartStats>;

export const ENDPOINT_STATES = ['scaled-to-zero', 'scaling', 'ready'] as const;

export const ZEndpoint = z.object({
  id: z.string(),
  teamId: z.string(),
  name: z.string(),
  model: z.string(),
  resources: ZJobResources,
  minReplicas: z.number().int(),
  maxReplicas: z.number().int(),
  targetConcurrency: z.number().int(),
  scaleToZeroAfterSeconds: z.number().int(),
  warmPool: z.number().int(),
  /** Serving replicas the autoscaler (or a manual scale) asks for. */
  desiredReplicas: z.number().int(),
  /** `scaled-to-zero`: no serving replica; `scaling`: fewer ready than desired; `ready`. */
  state: z.enum(ENDPOINT_STATES),
  replicas: z.object({ ready: z.number().int(), starting: z.number().int(), warm: z.number().int() }),
  coldStarts: ZColdStartStats,
  createdAt: z.string(),
  lastRequestAt: z.string().optional(),
});
export type Endpoint = z.infer<typeof ZEndpoint>;

export const ZEndpointReplica = z.object({
  replica: z.number().int(),
  state: z.enum(['starting', 'ready']),
  serving: z.boolean(),
  nodeName: z.string().optional(),
  gpus: z.array(z.object({ gpuId: z.string(), index: z.number().int(), migProfile: z.string().optional(), fraction: z.number().optional() })),
  createdAt: z.string(),
  readyAt: z.string().optional(),
});

export const ZEndpointDetail = ZEndpoint.extend({
  replicaList: z.array(ZEndpointReplica),
  /** Last 60 s, one point per second (oldest first): requests and in-flight requests. */
  traffic: z.array(z.object({ t: z.number().int(), rps: z.number(), concurrency: z.number() })),
  autoscaler: z
    .object({ panic: z.boolean(), observedConcurrency: z.number(), observedRps: z.number(), recommended: z.number().int(), reason: z.string() })
    .nullable(),
  reasons: z.array(z.object({ code: z.string(), message: z.string() })),
  /** The most recent cold starts (newest first, at most 20): when, how long, and whether a warm-pool replica took it. */
  coldStartHistory: z.array(z.object({ startedAt: z.string(), durationMs: z.number(), warm: z.boolean() })),
});
export type EndpointDetail = z.infer<typeof ZEndpointDetail>;

export const ZSimTraffic = z
  .object({
    endpointId: z.string().min(1).max(64),
    rps: z.number().gt(0).max(100_000),
    durationSeconds: z.number().int().min(1).max(3600),
  })
  .strict();
export type SimTraffic = z.infer<typeof ZSimTraffic>;
export const ZSimTrafficAccepted = z.object({ endpointId: z.string(), rps: z.number(), until: z.string() });
export type SimTrafficAccepted = z.infer<typeof ZSimTrafficAccepted>;
