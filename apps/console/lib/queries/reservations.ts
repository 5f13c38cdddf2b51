import { queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';

export const reservationKeys = { all: ['reservations'] as const };

/** Reservations with their windows in [from, to) (a week of the calendar), and each model's capacity. */
export const reservationsQuery = (client: GantryClient, from: string, to: string) =>
  queryOptions({
    queryKey: [...reservationKeys.all, from, to] as const,
    queryFn: () => client.reservations.list({ from, to }),
    refetchInterval: 15_000,
  });
