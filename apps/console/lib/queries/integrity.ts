import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';

/** The invariant checker over the database (operators): re-checked every minute while shown. */
export const integrityQuery = (client: GantryClient, settled: boolean) =>
  queryOptions({
    queryKey: ['integrity', settled ? 'settled' : 'strict'] as const,
    queryFn: () => client.integrity.check({ settled }),
    refetchInterval: 60_000,
  });
