import type { TimelineEvent } from '@gantry/contracts';

/** An Event row as a lease's or a node's timeline shows it. */
export function presentTimelineEvent(e: { id: string; type: string; message: string; nodeId: string | null; createdAt: Date }): TimelineEvent {
  return { id: e.id, type: e.type, message: e.message, nodeId: e.nodeId, createdAt: e.createdAt.toISOString() };
}
