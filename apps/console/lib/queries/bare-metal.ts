import { queryOptions } from '@tanstack/react-query';
import type { BareMetalLeaseCreate } from '@gantry/contracts';
import type { GantryClient } from '../api';

/** Steps take simulated minutes: poll every 2 s, as jobs do. */
export const BARE_METAL_POLL_MS = 2000;

export const bareMetalKeys = {
  all: ['bare-metal'] as const,
  list: (teamId: string | undefined) => [...bareMetalKeys.all, 'list', { teamId: teamId ?? null }] as const,
};

export const bareMetalListQuery = (client: GantryClient, teamId: string | undefined) =>
  queryOptions({
    queryKey: bareMetalKeys.list(teamId),
    queryFn: async () => (await client.bareMetal.list({ teamId: teamId || undefined })).items,
    refetchInterval: BARE_METAL_POLL_MS,
  });

export const requestBareMetal = (client: GantryClient, body: BareMetalLeaseCreate) => client.bareMetal.create(body);
export type LeaseAction = 'suspend' | 'resume' | 'release';
export const leaseAction = (client: GantryClient, id: string, action: LeaseAction) => client.bareMetal[action](id);
