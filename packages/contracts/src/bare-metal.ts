import { z } from 'zod';

/** Bare-metal leases (docs/bare-metal.md): whole nodes a team holds as bare metal. */
export const BARE_METAL_LEASE_STATES = ['pending', 'provisioning', 'deployed', 'suspending', 'suspended', 'resuming', 'releasing', 'released'] as const;
export const ZBareMetalLeaseState = z.enum(BARE_METAL_LEASE_STATES);
export type BareMetalLeaseState = z.infer<typeof ZBareMetalLeaseState>;

/** One node's step: provisioning -> deployed (<-> powering-off / powered-off / powering-on) -> deprovisioning (disk wipe) -> pool. */
export const BARE_METAL_NODE_STATES = ['provisioning', 'deployed', 'powering-off', 'powered-off', 'powering-on', 'deprovisioning'] as const;
export const ZBareMetalNodeState = z.enum(BARE_METAL_NODE_STATES);
export type BareMetalNodeState = z.infer<typeof ZBareMetalNodeState>;

export const ZBareMetalLeaseCreate = z
  .object({
    teamId: z.string().min(1).max(64),
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lower-case letters, digits and dashes'),
    /** GPU model of the nodes, e.g. `H100-80GB`. */
    gpuModel: z.string().min(1).max(64),
    /** Whole nodes. */
    count: z.number().int().min(1).max(64),
    /** OS image the provisioner writes to the nodes' disks, e.g. `ubuntu-22.04-cuda-12.4`. */
    image: z.string().min(1).max(200),
    /** All nodes under one leaf switch (a multi-node set). */
    sameLeaf: z.boolean().default(false),
  })
  .strict();
export type BareMetalLeaseCreate = z.input<typeof ZBareMetalLeaseCreate>;

export const ZBareMetalLeaseNode = z.object({
  id: z.string(),
  name: z.string(),
  leaf: z.string(),
  gpus: z.number().int(),
  state: ZBareMetalNodeState,
  since: z.string().nullable(),
});

/** An entry of a lease's or a node's timeline (the Event log, as jobs' events are). */
export const ZTimelineEvent = z.object({
  id: z.string(),
  type: z.string(),
  message: z.string(),
  /** The node the event is about (null: the lease itself). */
  nodeId: z.string().nullable(),
  createdAt: z.string(),
});
export type TimelineEvent = z.infer<typeof ZTimelineEvent>;

/** A node held by a bare-metal lease, as the Cluster page shows it: the lease's team only to those who may see it. */
export const ZNodeBareMetal = z.object({
  state: ZBareMetalNodeState,
  leaseId: z.string().optional(),
  leaseName: z.string().optional(),
  teamId: z.string().optional(),
});
export type NodeBareMetal = z.infer<typeof ZNodeBareMetal>;

export const ZBareMetalLease = z.object({
  id: z.string(),
  teamId: z.string(),
  name: z.string(),
  gpuModel: z.string(),
  count: z.number().int(),
  image: z.string(),
  sameLeaf: z.boolean(),
  state: ZBareMetalLeaseState,
  stateReason: z.string().nullable(),
  /** GPUs counted against the team's quota now (every GPU of every node held). */
  gpusHeld: z.number(),
  nodes: z.array(ZBareMetalLeaseNode),
  /** The lease's latest events, oldest first: each lease state and node step (docs/bare-metal.md, "Events"). */
  events: z.array(ZTimelineEvent),
  createdAt: z.string(),
  deployedAt: z.string().nullable(),
  releasedAt: z.string().nullable(),
});
export type BareMetalLease = z.infer<typeof ZBareMetalLease>;

export const ZBareMetalLeaseList = z.object({ items: z.array(ZBareMetalLease) });
export type BareMetalLeaseList = z.infer<typeof ZBareMetalLeaseList>;
