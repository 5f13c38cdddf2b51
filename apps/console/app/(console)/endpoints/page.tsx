'use client';

import { useQuery } from '@tanstack/react-query';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { EndpointCard } from '@/components/endpoint-card';
import { endpointsListQuery } from '@/lib/queries/endpoints';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

export default function EndpointsPage() {
  const client = useClient();
  const { teamId, team } = useTeam();
  const endpoints = useQuery(endpointsListQuery(client, teamId || undefined));
  const all = [...(endpoints.data ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const serving = all.reduce((s, e) => s + e.replicas.ready, 0);
  const atZero = all.filter((e) => e.state === 'scaled-to-zero').length;

  return (
    <>
      <PageHeader
        title="Endpoints"
        subtitle={
          <>
            {team ? team.name : 'All teams'} · <span data-testid="endpoints-count">{all.length}</span> endpoints · {serving} replicas ready · {atZero} scaled to
            zero
            <span className="live-dot" title="Refreshed every 2 seconds" />
          </>
        }
      />
      {endpoints.isLoading ? (
        <Loading />
      ) : endpoints.isError ? (
        <ErrorPanel error={endpoints.error} onRetry={() => void endpoints.refetch()} />
      ) : all.length === 0 ? (
        <Empty>No inference endpoints yet. Create one with POST /v1/endpoints (or the SDK&apos;s endpoints.create).</Empty>
      ) : (
        <div className="endpoint-list" data-testid="endpoints-list">
          {all.map((e) => (
            <EndpointCard key={e.id} endpoint={e} />
          ))}
        </div>
      )}
    </>
  );
}
