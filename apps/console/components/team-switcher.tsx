'use client';

import { useTeam } from '@/lib/team';
import type { VisibleTeam } from '@/lib/queries/teams';

/** Shown when the caller can act for several teams; '' selects "all teams". */
export function TeamSwitcher() {
  const { teams, teamId, setTeamId } = useTeam();
  if (teams.length < 2) {
    return teams.length === 1 ? (
      <div className="team-fixed" data-testid="team-current">
        <span className="field-label-dark">Team</span>
        <span>{teams[0].name}</span>
      </div>
    ) : null;
  }
  return (
    <label className="team-switcher">
      <span className="field-label-dark">Team</span>
      <select data-testid="team-switcher" value={teamId} onChange={(e) => setTeamId(e.target.value)}>
        <option value="">All teams</option>
        {byTenant(teams).map(([tenant, list]) =>
          tenant === null ? (
            list.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))
          ) : (
            <optgroup key={tenant} label={tenant} data-testid="team-switcher-tenant">
              {list.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name} ({tenant})
                </option>
              ))}
            </optgroup>
          ),
        )}
      </select>
    </label>
  );
}

/** Teams grouped under their tenant (in the order given); one group, named null, when no tenant is known. */
function byTenant(teams: VisibleTeam[]): [string | null, VisibleTeam[]][] {
  const groups = new Map<string | null, VisibleTeam[]>();
  for (const t of teams) {
    const k = t.tenantName ?? null;
    groups.set(k, [...(groups.get(k) ?? []), t]);
  }
  return [...groups.entries()];
}
