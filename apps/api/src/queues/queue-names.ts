import { z } from 'zod';

/** BullMQ queues (DESIGN.md section 5) and the payload schema of each. */
export const QUEUES = {
  schedule: z.object({ reason: z.string() }),
  lifecycle: z.object({
    action: z.enum(['start', 'stop', 'suspend', 'exited']),
    jobId: z.string(),
    exitCode: z.number().int().optional(),
  }),
} as const;

export type QueueName = keyof typeof QUEUES;
export type QueuePayload<Q extends QueueName> = z.infer<(typeof QUEUES)[Q]>;
export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];
