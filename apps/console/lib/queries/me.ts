import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';

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
