import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';
import { listAll } from './paginate';

export const CLUSTER_POLL_MS = 5000;

export const nodeKeys = {
  all: ['nodes'] as const,
  list: () => [...nodeKeys.all, 'list'] as const,
  detail: (id: string) => [...nodeKeys.all, 'detail', id] as const,
};

/** Every node of the cluster (all pages). */
export const nodesListQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: nodeKeys.list(),
    queryFn: () => listAll((cursor) => client.nodes.list({ limit: 500, cursor })),
    refetchInterval: CLUSTER_POLL_MS,
  });

/** One node with its GPUs (MIG layouts, shares, health). */
export const nodeDetailQuery = (client: GantryClient, id: string) =>
  queryOptions({
    queryKey: nodeKeys.detail(id),
    queryFn: () => client.nodes.get(id),
    refetchInterval: CLUSTER_POLL_MS,
  });
