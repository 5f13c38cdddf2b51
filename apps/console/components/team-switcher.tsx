'use client';

import { useTeam } from '@/lib/team';

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
        {teams.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
    </label>
  );
}
