import { queryOptions } from '@tanstack/react-query';
import type { EndpointCreate, EndpointUpdate } from '@gantry/contracts';
import type { GantryClient } from '../api';
import { listAll } from './paginate';

/** Replicas and traffic move every autoscaler tick (2 s): poll at the same pace. */
export const ENDPOINTS_POLL_MS = 2000;

export const endpointKeys = {
  all: ['endpoints'] as const,
  list: (teamId: string | undefined) => [...endpointKeys.all, 'list', { teamId: teamId ?? null }] as const,
  detail: (id: string) => [...endpointKeys.all, 'detail', id] as const,
};

/** Every endpoint visible to the caller, optionally for one team. */
export const endpointsListQuery = (client: GantryClient, teamId: string | undefined) =>
  queryOptions({
    queryKey: endpointKeys.list(teamId),
    queryFn: () => listAll((cursor) => client.endpoints.list({ teamId: teamId || undefined, limit: 200, cursor }), 10),
    refetchInterval: ENDPOINTS_POLL_MS,
  });

/** One endpoint with its replicas, last minute of traffic, autoscaler state and cold starts. */
export const endpointDetailQuery = (client: GantryClient, id: string) =>
  queryOptions({
    queryKey: endpointKeys.detail(id),
    queryFn: () => client.endpoints.get(id),
    refetchInterval: ENDPOINTS_POLL_MS,
  });

export const createEndpoint = (client: GantryClient, body: EndpointCreate, idempotencyKey?: string) => client.endpoints.create(body, { idempotencyKey });
export const updateEndpoint = (client: GantryClient, id: string, body: EndpointUpdate) => client.endpoints.update(id, body);
export const scaleEndpoint = (client: GantryClient, id: string, replicas: number) => client.endpoints.scale(id, replicas);
export const invokeEndpoint = (client: GantryClient, id: string, input: string) => client.endpoints.invoke(id, input);
export const deleteEndpoint = (client: GantryClient, id: string) => client.endpoints.remove(id);
