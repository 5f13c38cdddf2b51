import { PERSONAS } from '@gantry/contracts';
import { z } from 'zod';

/** BullMQ queues (docs/design.md section 5) and the payload schema of each. */
export const QUEUES = {
  schedule: z.object({ reason: z.string() }),
  lifecycle: z.object({
    /** `start-many`: the starts of one scheduling cycle (`jobIds`), sent to the driver together. */
    action: z.enum(['start', 'start-many', 'stop', 'suspend', 'exited']),
    jobId: z.string(),
    jobIds: z.array(z.string()).min(1).optional(),
    exitCode: z.number().int().optional(),
  }),
  /** Repeatable: sample the driver's GPU metrics into telemetry rollups. */
  telemetry: z.object({}).passthrough(),
  /** Apply a MIG layout to one GPU: out of scheduling, wait for idle slices, apply, verify, back. */
  mig: z.object({
    gpuId: z.string(),
    layout: z.array(z.object({ profile: z.string(), start: z.number().int() })),
    reason: z.string(),
  }),
  /** Node operations: persona switch (drain, reconfigure, ready), operator cordon / uncordon / drain. */
  persona: z.object({
    action: z.enum(['switch', 'drain', 'cordon', 'uncordon']),
    nodeId: z.string(),
    persona: z.enum(PERSONAS).optional(),
    reason: z.string().optional(),
  }),
  /** Power a node off (it holds no work: checked when the change began) or on, through the driver (docs/power.md). */
  power: z.object({
    action: z.enum(['on', 'off']),
    nodeId: z.string(),
    reason: z.string().optional(),
  }),
  /** Health events and the failover loop: classify, cordon, drain, reschedule, remediate, validate, uncordon. */
  failover: z.object({
    /** `retry-burn-in` / `release`: an operator's answer to an incident that needs attention. */
    action: z.enum(['fault', 'job-lost', 'remediate', 'inject', 'retry-burn-in', 'release']),
    kind: z.enum(['xid', 'nic-down', 'nic-up', 'node-down', 'node-up', 'recover', 'power-up-fail', 'latent']).optional(),
    nodeName: z.string().optional(),
    gpuIndex: z.number().int().optional(),
    xid: z.number().int().optional(),
    jobId: z.string().optional(),
    exitReason: z.string().optional(),
    incidentId: z.string().optional(),
    /** When the driver saw it (ms since the epoch): detection time of an incident. */
    at: z.number().optional(),
    source: z.string().optional(),
  }),
  /** Endpoints (repeatable `tick`, every 2 s): the autoscaler; `start`: start a placed replica through the driver. */
  autoscale: z.object({
    action: z.enum(['tick', 'start']),
    replicaId: z.string().optional(),
  }),
  /** Repeatable `tick` (every 30 s): run the suspend and resume windows that are due. */
  schedules: z.object({}).passthrough(),
  /**
   * Bare metal (docs/bare-metal.md): `tick` (repeatable, every 2 s, and on every lease change)
   * fills queued leases with idle nodes and moves leases on; `step` runs one node's step
   * (provision, power off or on, wipe) through the driver.
   */
  'bare-metal': z.object({
    action: z.enum(['tick', 'step']),
    nodeId: z.string().optional(),
    step: z.string().optional(),
  }),
  /** Repeatable `tick` (every 2 s): read what running jobs wrote from the driver into JobLogLine. */
  logs: z.object({}).passthrough(),
  /** Repeatable `tick` (GANTRY_RESERVATION_TICK_SECONDS): a reservation window opened or closed -> a scheduling cycle. */
  reservations: z.object({}).passthrough(),
  /** One what-if planner run (docs/planner.md). */
  planner: z.object({ runId: z.string() }),
} as const;

export type QueueName = keyof typeof QUEUES;
export type QueuePayload<Q extends QueueName> = z.infer<(typeof QUEUES)[Q]>;
export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];
