import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import type { GantryClient } from '../api';
import { listAll } from './paginate';

/** Quotas, usage, API keys and the audit log (the administration pages). */
export const adminKeys = {
  quotas: (teamId: string) => ['quotas', teamId] as const,
  usage: (teamId: string) => ['usage', teamId] as const,
  apiKeys: ['api-keys'] as const,
  audit: (action: string, range: AuditRange) => ['audit', action, range.from ?? null, range.to ?? null, range.outcome ?? null] as const,
};

export const quotasQuery = (client: GantryClient, teamId: string) =>
  queryOptions({ queryKey: adminKeys.quotas(teamId), queryFn: () => client.quotas.get(teamId), staleTime: 5_000 });

/** Usage moves with the queue: poll every 5 s. */
export const usageQuery = (client: GantryClient, teamId: string) =>
  queryOptions({ queryKey: adminKeys.usage(teamId), queryFn: () => client.quotas.usage(teamId), refetchInterval: 5_000 });

export const apiKeysQuery = (client: GantryClient) =>
  queryOptions({ queryKey: adminKeys.apiKeys, queryFn: () => listAll((cursor) => client.apiKeys.list({ limit: 500, cursor }), 5) });

/** A time range of the audit log (ISO 8601 instants; either end open). */
export interface AuditRange {
  from?: string;
  to?: string;
  /** `refused`: only the refused changes. */
  outcome?: 'refused';
}

export const auditQuery = (client: GantryClient, action: string, range: AuditRange = {}) =>
  queryOptions({
    queryKey: adminKeys.audit(action, range),
    queryFn: () => client.audit.list({ limit: 200, action: action || undefined, ...range }),
    refetchInterval: 10_000,
    // Typing in the filter keeps the last rows on screen until the new ones arrive.
    placeholderData: keepPreviousData,
  });
