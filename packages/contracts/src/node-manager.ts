import { z } from 'zod';
import { ZGpuHealth, ZNodePowerState, ZNodeState, ZPersona } from './cluster';
import { MIG_MEMORY_SLOTS } from './gpu-catalog';

/**
 * Node manager: operator actions on nodes and GPUs, MIG layouts, personas,
 * the topology tree, incidents and simulated faults.
 */

export const ZMigLayoutEntry = z.object({ profile: z.string().min(1).max(32), start: z.number().int().min(0).max(7) }).strict();
export type MigLayoutEntry = z.infer<typeof ZMigLayoutEntry>;

/**
 * `PUT /v1/gpus/:id/mig`: the GPU's whole layout; [] turns MIG off. At most one partition per
 * memory slot (8: an MI300X in CPX has 8 partitions; a MIG GPU at most 7).
 */
export const ZMigLayoutRequest = z.object({ layout: z.array(ZMigLayoutEntry).max(MIG_MEMORY_SLOTS) }).strict();
export type MigLayoutRequest = z.infer<typeof ZMigLayoutRequest>;

/** Answer of `PUT /v1/gpus/:id/mig` (202): the change is queued and applied in the background. */
export const ZMigChangeAccepted = z.object({
  gpuId: z.string(),
  nodeId: z.string(),
  state: z.enum(['applying', 'unchanged']),
  layout: z.array(ZMigLayoutEntry),
});
export type MigChangeAccepted = z.infer<typeof ZMigChangeAccepted>;

export const ZPersonaRequest = z.object({ persona: ZPersona }).strict();
export type PersonaRequest = z.infer<typeof ZPersonaRequest>;

export const ZNodeActionRequest = z.object({ reason: z.string().trim().min(1).max(200).optional() }).strict();
export type NodeActionRequest = z.infer<typeof ZNodeActionRequest>;

/** `POST /v1/nodes/:id/power`: power a node on or off by hand (off: 409 while it holds work). */
export const ZNodePowerRequest = z.object({ state: z.enum(['on', 'off']), reason: z.string().trim().min(1).max(200).optional() }).strict();
export type NodePowerRequest = z.infer<typeof ZNodePowerRequest>;

/** Answer of the node actions (cordon, uncordon, drain, persona). */
export const ZNodeActionResult = z.object({
  nodeId: z.string(),
  name: z.string(),
  state: ZNodeState,
  persona: ZPersona,
  personaTarget: ZPersona.nullable(),
  stateReason: z.string().nullable(),
  powerState: ZNodePowerState,
});
export type NodeActionResult = z.infer<typeof ZNodeActionResult>;

/** `GET /v1/topology`: spines -> leaves -> nodes, with GPU counts. */
export const ZTopologyNode = z.object({
  id: z.string(),
  name: z.string(),
  persona: ZPersona,
  state: ZNodeState,
  gpuModel: z.string().nullable(),
  gpuCount: z.number().int(),
  gpusAllocated: z.number(),
  gpusUnhealthy: z.number().int(),
  powerState: ZNodePowerState,
});
export const ZTopology = z.object({
  spines: z.array(
    z.object({
      name: z.string(),
      leaves: z.array(z.object({ name: z.string(), nodes: z.array(ZTopologyNode) })),
    }),
  ),
  totals: z.object({ spines: z.number().int(), leaves: z.number().int(), nodes: z.number().int(), gpus: z.number().int() }),
});
export type Topology = z.infer<typeof ZTopology>;

/**
 * `power-up-fail`: the node's next power-on fails (it stays off and an incident opens). `latent`: a GPU
 * defect idle checks miss; only load shows it (a burn-in fails on it, other work gets Xid 79);
 * `recover` clears it.
 */
export const FAULT_KINDS = ['xid', 'nic-down', 'node-down', 'recover', 'power-up-fail', 'latent'] as const;
/** `POST /v1/sim/faults` (simulated driver only). */
export const ZFaultRequest = z
  .object({
    nodeId: z.string().min(1).max(100),
    gpuIndex: z.number().int().min(0).max(63).optional(),
    kind: z.enum(FAULT_KINDS),
    xid: z.number().int().min(1).max(1000).optional(),
  })
  .strict()
  .refine((f) => f.kind !== 'xid' || f.gpuIndex !== undefined, { message: 'an xid fault needs gpuIndex', path: ['gpuIndex'] })
  .refine((f) => f.kind !== 'latent' || f.gpuIndex !== undefined, { message: 'a latent fault needs gpuIndex', path: ['gpuIndex'] });
export type FaultRequest = z.infer<typeof ZFaultRequest>;
export const ZFaultAccepted = z.object({ accepted: z.literal(true), nodeId: z.string(), nodeName: z.string(), kind: z.enum(FAULT_KINDS) });
export type FaultAccepted = z.infer<typeof ZFaultAccepted>;

/**
 * `burn-in`: the repaired GPU or node runs a diagnostic under load before it goes back into
 * service; `needs-attention`: it failed burn-in too often and stays quarantined for a person.
 */
export const INCIDENT_STATES = ['open', 'mitigated', 'remediating', 'burn-in', 'needs-attention', 'resolved', 'failed'] as const;
export const ZIncidentState = z.enum(INCIDENT_STATES);
/** One GPU's verdict in a burn-in. */
export const ZBurnInFinding = z.object({ gpuIndex: z.number().int(), result: z.enum(['pass', 'fail']), detail: z.string() });
export type BurnInFinding = z.infer<typeof ZBurnInFinding>;
export const ZIncidentStep = z.object({
  at: z.string(),
  step: z.string(),
  message: z.string(),
  /** Burn-in steps (`burn-in-passed`, `burn-in-failed`): the verdict per GPU. */
  findings: z.array(ZBurnInFinding).optional(),
  /** Burn-in steps: how long the diagnostic ran, in seconds. */
  durationSeconds: z.number().optional(),
});
export type IncidentStep = z.infer<typeof ZIncidentStep>;

export const ZIncident = z.object({
  id: z.string(),
  kind: z.string(),
  severity: z.string(),
  state: ZIncidentState,
  /** What was quarantined: `none` (the job restarted only), `gpu` or `node`. */
  scope: z.enum(['none', 'gpu', 'node']),
  remediation: z.string(),
  summary: z.string(),
  xid: z.number().int().nullable(),
  nodeId: z.string().nullable(),
  nodeName: z.string().nullable(),
  gpuId: z.string().nullable(),
  gpuIndex: z.number().int().nullable(),
  gpuHealth: ZGpuHealth.nullable(),
  /** Jobs the fault moved (only the caller's tenant's jobs are listed). */
  jobIds: z.array(z.string()),
  jobsAffected: z.number().int(),
  timeline: z.array(ZIncidentStep),
  detectedAt: z.string(),
  /** Every affected workload running again elsewhere. */
  mitigatedAt: z.string().nullable(),
  resolvedAt: z.string().nullable(),
  /** Time to recover in seconds (detection -> resolved); null while open. */
  mttrSeconds: z.number().nullable(),
  /** Burn-ins under load this incident failed (two keep the hardware quarantined: `needs-attention`). */
  burnInFailures: z.number().int(),
});
export type Incident = z.infer<typeof ZIncident>;

/** `POST /v1/incidents/{id}/burn-in` and `/release`: an operator's answer to a `needs-attention` incident. */
export const ZIncidentActionAccepted = z.object({ accepted: z.literal(true), incidentId: z.string(), action: z.enum(['burn-in', 'release']) });
export type IncidentActionAccepted = z.infer<typeof ZIncidentActionAccepted>;

export const ZIncidentListQuery = z
  .object({
    state: ZIncidentState.optional(),
    nodeId: z.string().max(100).optional(),
  })
  .strict();

/** `GET /v1/cluster/integrity`: the invariant checker over the database, on demand (operators). */
export const ZIntegrityQuery = z
  .object({
    /** Also the rules that hold once the system is quiet (nothing stuck in a transition). */
    settled: z.enum(['true', 'false']).optional(),
  })
  .strict();
export type IntegrityQuery = z.infer<typeof ZIntegrityQuery>;

export const ZIntegrityViolation = z.object({
  rule: z.string(),
  subject: z.string(),
  message: z.string(),
});
export type IntegrityViolation = z.infer<typeof ZIntegrityViolation>;

export const ZIntegrityReport = z.object({
  ok: z.boolean(),
  checkedAt: z.string(),
  settled: z.boolean(),
  ms: z.number(),
  counts: z.object({ jobs: z.number(), activeAllocations: z.number(), gpus: z.number(), migSlices: z.number(), endpointReplicas: z.number() }),
  violations: z.array(ZIntegrityViolation),
});
export type IntegrityReport = z.infer<typeof ZIntegrityReport>;
