'use client';

import { useEffect } from 'react';
import { usePathname, useRouter } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import { Sidebar } from '@/components/sidebar';
import { ErrorPanel } from '@/components/states';
import { meQuery } from '@/lib/queries/me';
import { visibleTeamsQuery } from '@/lib/queries/teams';
import { useSession } from '@/lib/session';
import { TeamProvider } from '@/lib/team';
import type { GantryClient } from '@/lib/api';
import { LiveUpdates } from '@/lib/live-events';
import { ScrollRegions } from '@/components/scroll-regions';

/** Every page but /login: requires an API key, shows the sidebar and the team selection. */
export default function ConsoleLayout({ children }: { children: React.ReactNode }) {
  const { ready, client, endReason } = useSession();
  const router = useRouter();
  const pathname = usePathname();

  useEffect(() => {
    if (!ready || client) return;
    const next = encodeURIComponent(pathname);
    router.replace(endReason === 'signed-out' ? '/login' : endReason === 'expired' ? `/login?reason=expired&next=${next}` : `/login?next=${next}`);
  }, [ready, client, endReason, router, pathname]);

  if (!ready || !client) {
    return <div className="boot" aria-busy="true" />;
  }
  return <SignedIn client={client}>{children}</SignedIn>;
}

function SignedIn({ client, children }: { client: GantryClient; children: React.ReactNode }) {
  const me = useQuery(meQuery(client));
  const teams = useQuery(visibleTeamsQuery(client, me.data));

  if (!me.data) {
    return (
      <div className="shell">
        <Sidebar me={undefined} />
        <main className="main">
          {me.isError ? (
            <ErrorPanel error={me.error} onRetry={() => void me.refetch()} title="Cannot load your identity" />
          ) : (
            <div className="loading-block">Loading…</div>
          )}
        </main>
      </div>
    );
  }

  return (
    <TeamProvider me={me.data} teams={teams.data ?? me.data.teams}>
      <div className="shell">
        <Sidebar me={me.data} />
        <main className="main">{children}</main>
        <LiveUpdates client={client} />
        <ScrollRegions />
      </div>
    </TeamProvider>
  );
}
