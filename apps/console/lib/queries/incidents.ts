import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';

export const incidentKeys = {
  all: ['incidents'] as const,
  list: (state?: string) => [...incidentKeys.all, 'list', state ?? 'all'] as const,
};

/** The latest incidents (newest first), polled: faults move through their loop in seconds. */
export const incidentsListQuery = (client: GantryClient, state?: string) =>
  queryOptions({
    queryKey: incidentKeys.list(state),
    queryFn: () => client.incidents.list({ limit: 100, state }),
    refetchInterval: 3000,
  });
