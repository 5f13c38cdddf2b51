import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';
import { CLUSTER_POLL_MS } from './nodes';
import { listAll } from './paginate';

export const gpuKeys = {
  all: ['gpus'] as const,
  list: () => [...gpuKeys.all, 'list'] as const,
};

/** Every GPU of the cluster, read 500 at a time following nextCursor. */
export const gpusListQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: gpuKeys.list(),
    queryFn: () => listAll((cursor) => client.gpus.list({ limit: 500, cursor })),
    refetchInterval: CLUSTER_POLL_MS,
  });
