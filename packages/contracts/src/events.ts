/** Topics of the live stream: `topic` lets the console refresh the right views. */
export const LIVE_EVENT_TOPICS = ['job', 'node', 'incident', 'other'] as const;
export type LiveEventTopic = (typeof LIVE_EVENT_TOPICS)[number];

/** One message of the live event stream (`/v1/events/stream`). */
export interface LiveEvent {
  id: string;
  topic: LiveEventTopic;
  type: string;
  tenantId: string | null;
  /** The team of the event's job (null for tenant events without a job and for cluster-wide ones). */
  teamId: string | null;
  jobId: string | null;
  nodeId: string | null;
  message: string;
  at: string;
}
