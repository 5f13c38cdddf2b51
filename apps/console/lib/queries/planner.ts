import { queryOptions } from '@tanstack/react-query';
import type { PlannerRun } from '@gantry/contracts';
import type { GantryClient } from '../api';

export const plannerKeys = {
  all: ['planner'] as const,
  list: () => [...plannerKeys.all, 'list'] as const,
  run: (id: string) => [...plannerKeys.all, 'run', id] as const,
};

export const isLiveRun = (r: Pick<PlannerRun, 'status'>) => r.status === 'queued' || r.status === 'running';

/** Recent what-if runs (without their results); polled while one is live. */
export const plannerRunsQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: plannerKeys.list(),
    queryFn: () => client.planner.list(),
    refetchInterval: (q) => (q.state.data?.items.some(isLiveRun) ? 2000 : false),
  });

/** One run: polled every second while queued or running (its progress bar), then left alone. */
export const plannerRunQuery = (client: GantryClient, id: string) =>
  queryOptions({
    queryKey: plannerKeys.run(id),
    queryFn: () => client.planner.get(id),
    refetchInterval: (q) => (!q.state.data || isLiveRun(q.state.data) ? 1000 : false),
  });
