import { queryOptions } from '@tanstack/react-query';
import type { JobCreate } from '@gantry/contracts';
import type { GantryClient } from '../api';
import { listAll } from './paginate';

/** Jobs change state every few seconds on the simulated cluster: poll every 2 s. */
export const JOBS_POLL_MS = 2000;

export const jobKeys = {
  all: ['jobs'] as const,
  lists: () => [...jobKeys.all, 'list'] as const,
  list: (teamId: string | undefined) => [...jobKeys.lists(), { teamId: teamId ?? null }] as const,
  detail: (id: string) => [...jobKeys.all, 'detail', id] as const,
  summary: (teamId: string | undefined) => [...jobKeys.all, 'summary', { teamId: teamId ?? null }] as const,
};

/** How many jobs are in each state and the head of the queue, optionally for one team (the Overview). */
export const jobsSummaryQuery = (client: GantryClient, teamId: string | undefined) =>
  queryOptions({
    queryKey: jobKeys.summary(teamId),
    queryFn: () => client.jobs.summary({ teamId: teamId || undefined }),
    refetchInterval: JOBS_POLL_MS,
  });

/** Every job visible to the caller, optionally for one team (all pages). */
export const jobsListQuery = (client: GantryClient, teamId: string | undefined) =>
  queryOptions({
    queryKey: jobKeys.list(teamId),
    queryFn: () => listAll((cursor) => client.jobs.list({ teamId: teamId || undefined, limit: 500, cursor }), 10),
    refetchInterval: JOBS_POLL_MS,
  });

/** One job with its placement, reasons and events. */
export const jobDetailQuery = (client: GantryClient, id: string) =>
  queryOptions({
    queryKey: jobKeys.detail(id),
    queryFn: () => client.jobs.get(id),
    refetchInterval: JOBS_POLL_MS,
  });

export const createJob = (client: GantryClient, body: JobCreate, idempotencyKey: string) => client.jobs.create(body, { idempotencyKey });

export const cancelJob = (client: GantryClient, id: string) => client.jobs.cancel(id);
export const suspendJob = (client: GantryClient, id: string) => client.jobs.suspend(id);
export const resumeJob = (client: GantryClient, id: string) => client.jobs.resume(id);
