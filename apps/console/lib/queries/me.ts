import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';
import type { Me } from '@gantry/contracts';

export const meKeys = {
  all: ['me'] as const,
};

/** Who is signed in: name, role, scopes and the teams the caller may act for. */
export const meQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: meKeys.all,
    queryFn: () => client.me(),
    staleTime: 60_000,
  });

/** An operator: may act on the cluster (node actions, MIG layouts, the integrity check). */
export const isOperator = (me: Me | undefined): boolean => !!me && (me.role === 'platform-admin' || me.scopes.includes('cluster:admin'));
