import { queryOptions } from '@tanstack/react-query';
import type { Me, Team } from '@gantry/contracts';
import type { GantryClient } from '../api';
import { listAll } from './paginate';

/** A team, with its tenant's name when the caller sees several tenants (the platform admin). */
export type VisibleTeam = Team & { tenantName?: string };

export const teamKeys = {
  all: ['teams'] as const,
  visible: (tenantId: string | null) => [...teamKeys.all, 'visible', tenantId] as const,
};

/**
 * Teams the caller can act for. A team- or tenant-bound caller gets them from /v1/me; a
 * tenant-wide caller with no listed team reads its tenant's teams; a platform admin sees every
 * tenant's teams, each with its tenant's name (teams of two tenants may share a name).
 */
export const visibleTeamsQuery = (client: GantryClient, me: Me | undefined) =>
  queryOptions({
    queryKey: teamKeys.visible(me?.tenantId ?? null),
    enabled: !!me,
    staleTime: 60_000,
    queryFn: async (): Promise<VisibleTeam[]> => {
      if (!me) return [];
      if (me.role === 'platform-admin' && !me.tenantId) {
        // every tenant's teams: say which tenant each belongs to
        const tenants = await listAll((cursor) => client.tenants.list({ limit: 500, cursor }), 5);
        const tenantName = new Map(tenants.map((t) => [t.id, t.name]));
        const teams =
          me.teams.length > 0
            ? me.teams
            : (await Promise.all(tenants.map((t) => listAll((cursor) => client.teams.list(t.id, { limit: 500, cursor }), 5)))).flat();
        return teams
          .map((team) => ({ ...team, tenantName: tenantName.get(team.tenantId) ?? 'another tenant' }))
          .sort((a, b) => a.tenantName.localeCompare(b.tenantName) || a.name.localeCompare(b.name));
      }
      if (me.teams.length > 0) return me.teams;
      if (me.tenantId) {
        return listAll((cursor) => client.teams.list(me.tenantId as string, { limit: 500, cursor }));
      }
      return [];
    },
  });
