'use client';

import { useState } from 'react';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { Endpoint } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { EndpointCard } from '@/components/endpoint-card';
import { EndpointCreateDialog } from '@/components/endpoints/create-dialog';
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
  const [createOpen, setCreateOpen] = useState(false);
  const [created, setCreated] = useState<Endpoint | null>(null);

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
        actions={
          <button type="button" className="btn btn-primary" data-testid="endpoint-create-open" onClick={() => setCreateOpen(true)}>
            + Create endpoint
          </button>
        }
      />
      {created && (
        <div className="alert alert-ok flash" data-testid="endpoint-create-success">
          Created <Link href={`/endpoints/${created.id}`}>{created.name}</Link> ({created.state}).
          <button type="button" className="btn-close" aria-label="Dismiss" onClick={() => setCreated(null)}>
            ×
          </button>
        </div>
      )}
      {endpoints.isLoading ? (
        <Loading />
      ) : endpoints.isError ? (
        <ErrorPanel error={endpoints.error} onRetry={() => void endpoints.refetch()} />
      ) : all.length === 0 ? (
        <Empty>
          No inference endpoints yet.{' '}
          <button type="button" className="btn-link" onClick={() => setCreateOpen(true)}>
            Create one
          </button>
          .
        </Empty>
      ) : (
        <div className="endpoint-list" data-testid="endpoints-list">
          {all.map((e) => (
            <EndpointCard key={e.id} endpoint={e} />
          ))}
        </div>
      )}
      {createOpen && (
        <EndpointCreateDialog
          onClose={() => setCreateOpen(false)}
          onCreated={(e) => {
            setCreateOpen(false);
            setCreated(e);
          }}
        />
      )}
    </>
  );
}
