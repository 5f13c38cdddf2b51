/**
 * The events a bare-metal lease writes (docs/bare-metal.md, "Events"): each lease state change is
 * an event on the lease (`bare-metal.<state>`), each node step an event on the lease and on the
 * node (`node.bare-metal.<step>`), in the same Event log jobs and nodes write to. The lease's
 * tenant owns them; its team scopes them (through `Event.bareMetalLeaseId`), as a job's team does.
 */
import type { BareMetalLeaseState } from '@gantry/contracts';
import type { NewEvent } from '../events/events.repository';
import { nodeStepToApi, type DbNodeStep } from './lease-states';

export interface EventLease {
  id: string;
  tenantId: string;
  name: string;
}

const LEASE_SAYS: Record<BareMetalLeaseState, string> = {
  pending: 'requested: waiting for idle nodes',
  provisioning: 'provisioning: every node held, writing the image',
  deployed: 'deployed: every node is up with the image',
  suspending: 'suspended: powering the nodes off',
  suspended: 'suspended: every node powered off',
  resuming: 'resumed: powering the nodes on',
  releasing: 'released: wiping the disks',
  released: 'released: every node wiped and back in the pool',
};

/** An event on the lease: it entered `state` (`requested` for a new lease). */
export function leaseEvent(lease: EventLease, state: BareMetalLeaseState, detail?: string): NewEvent {
  return {
    tenantId: lease.tenantId,
    bareMetalLeaseId: lease.id,
    type: `bare-metal.${state === 'pending' ? 'requested' : state}`,
    message: `lease "${lease.name}" ${LEASE_SAYS[state]}${detail ? ` (${detail})` : ''}`,
    data: { state },
  };
}

const STEP_SAYS: Record<DbNodeStep, string> = {
  provisioning: 'held by bare-metal lease',
  deployed: 'deployed for bare-metal lease',
  powering_off: 'powering off for bare-metal lease',
  powered_off: 'powered off for bare-metal lease',
  powering_on: 'powering on for bare-metal lease',
  deprovisioning: 'disk wipe (deprovisioning) for bare-metal lease',
};

/** An event on the lease and on the node: the node entered `step` (null: wiped and back in the pool). */
export function nodeStepEvent(lease: EventLease, node: { id: string; name: string }, step: DbNodeStep | null, detail?: string): NewEvent {
  const says = step === null ? 'wiped and back in the container pool from bare-metal lease' : STEP_SAYS[step];
  return {
    tenantId: lease.tenantId,
    bareMetalLeaseId: lease.id,
    nodeId: node.id,
    type: `node.bare-metal.${step === null ? 'returned' : nodeStepToApi(step)}`,
    message: `node ${node.name} ${says} "${lease.name}"${detail ? `: ${detail}` : ''}`,
    data: { step: step === null ? null : nodeStepToApi(step) },
  };
}

/** An event on the lease and on the node: a step failed through the driver (the queue retries it). */
export function nodeStepFailedEvent(lease: EventLease, node: { id: string; name: string }, step: DbNodeStep, error: string): NewEvent {
  return {
    tenantId: lease.tenantId,
    bareMetalLeaseId: lease.id,
    nodeId: node.id,
    type: 'node.bare-metal.failed',
    message: `node ${node.name}: ${nodeStepToApi(step)} for bare-metal lease "${lease.name}" failed: ${error.slice(0, 300)}`,
    data: { step: nodeStepToApi(step) },
  };
}
