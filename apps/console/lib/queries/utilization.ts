import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';

export const utilizationKeys = {
  all: ['utilization'] as const,
  capacity: () => [...utilizationKeys.all, 'capacity'] as const,
};

/** GPUs by model: total, allocated, free, unhealthy. */
export const capacityQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: utilizationKeys.capacity(),
    queryFn: () => client.utilization.capacity(),
    refetchInterval: 5000,
  });
