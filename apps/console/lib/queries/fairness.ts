import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';

/** Fair share over time between the tenant's teams; polled, as usage decays and the queue moves. */
export const fairnessQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: ['fairness'] as const,
    queryFn: () => client.fairness.get(),
    refetchInterval: 5000,
  });
