import { z } from 'zod';
import { ZPriority } from './jobs';

/** One team in the fair-share picture of its tenant (`GET /v1/fairness`). */
export const ZTeamFairShare = z.object({
  teamId: z.string(),
  teamName: z.string(),
  /** Fair-share weight (entitlement between teams). */
  weight: z.number(),
  /** Guaranteed and limit GPUs per GPU model (`*` = any model): the team's quota entitlement. */
  entitlement: z.array(z.object({ gpuModel: z.string(), guaranteed: z.number(), limit: z.number() })),
  /** GPUs the team holds now. */
  gpusHeld: z.number(),
  /** Past GPU usage with exponential decay (half-life `halfLifeSeconds`), in GPU-hours. */
  decayedGpuHours: z.number(),
  /** The decayed usage as an average number of GPUs (what a team holding G GPUs for ever converges to: G). */
  decayedAverageGpus: z.number(),
  /** GPUs fair share counts for the team: (1 - historyWeight) x held + historyWeight x decayed average GPUs. */
  fairShareGpus: z.number(),
  /** Weighted dominant-resource share the scheduler orders by (lower goes first). */
  share: z.number(),
  /** Pending jobs of the team. */
  pending: z.number().int(),
});
export type TeamFairShare = z.infer<typeof ZTeamFairShare>;

export const ZFairness = z.object({
  /** Half-life of past usage, in cluster seconds (simulated seconds on the simulated cluster). */
  halfLifeSeconds: z.number(),
  /** w in [0, 1]: how much decayed usage weighs against current holdings (0 = current holdings only, 1 = decayed usage only). */
  historyWeight: z.number(),
  clusterGpus: z.number().int(),
  teams: z.array(ZTeamFairShare),
  /** The head of the queue, in the order the scheduler tries it (first 10). */
  queue: z.array(
    z.object({
      position: z.number().int(),
      jobId: z.string().nullable(),
      /** Null for a job of another team than the caller's (team-bound callers see other teams' jobs only as a team). */
      jobName: z.string().nullable(),
      teamId: z.string(),
      teamName: z.string(),
      priority: ZPriority,
    }),
  ),
  /** Why the first job of the queue goes next, in a sentence. */
  why: z.string().nullable(),
});
export type Fairness = z.infer<typeof ZFairness>;
