'use client';

import { createContext, useCallback, useContext, useMemo, useSyncExternalStore } from 'react';
import type { Me } from '@gantry/contracts';
import type { VisibleTeam } from './queries/teams';
import { getStoredTeam, setStoredTeam, subscribeStorage } from './storage';

interface TeamSelection {
  /** Teams the caller can act for. */
  teams: VisibleTeam[];
  /** The selected team id, or '' for "all teams". */
  teamId: string;
  team: VisibleTeam | undefined;
  setTeamId: (id: string) => void;
  teamName: (id: string) => string;
}

const TeamContext = createContext<TeamSelection | null>(null);

export function TeamProvider({ me, teams, children }: { me: Me; teams: VisibleTeam[]; children: React.ReactNode }) {
  const stored = useSyncExternalStore(subscribeStorage, getStoredTeam, () => null);

  const teamId = useMemo(() => {
    const known = (id: string) => teams.some((t) => t.id === id);
    if (stored === '' && teams.length > 1) return '';
    if (stored && known(stored)) return stored;
    if (me.teamId && known(me.teamId)) return me.teamId;
    if (teams.length === 1) return teams[0].id;
    return me.teamId ?? '';
  }, [stored, teams, me.teamId]);

  const setTeamId = useCallback((id: string) => setStoredTeam(id), []);
  const byId = useMemo(() => new Map(teams.map((t) => [t.id, t])), [teams]);
  // a platform admin sees teams of several tenants: "Research (Acme AI)"
  const teamName = useCallback(
    (id: string) => {
      const t = byId.get(id);
      if (!t) return id;
      return t.tenantName ? `${t.name} (${t.tenantName})` : t.name;
    },
    [byId],
  );

  const value = useMemo(() => ({ teams, teamId, team: byId.get(teamId), setTeamId, teamName }), [teams, teamId, byId, setTeamId, teamName]);
  return <TeamContext.Provider value={value}>{children}</TeamContext.Provider>;
}

export function useTeam(): TeamSelection {
  const t = useContext(TeamContext);
  if (!t) throw new Error('useTeam outside TeamProvider');
  return t;
}
