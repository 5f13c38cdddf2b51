'use client';

import Link from 'next/link';
import { useParams, useRouter } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { EndpointCard } from '@/components/endpoint-card';
import { EndpointCallSnippet } from '@/components/endpoints/call-snippet';
import { EndpointDelete } from '@/components/endpoints/delete-button';
import { EndpointSettingsEditor } from '@/components/endpoints/settings-editor';
import { EndpointReplicas } from '@/components/endpoints/replicas-table';
import { ColdStartHistory } from '@/components/endpoints/cold-start-history';
import { EndpointTrafficChart } from '@/components/endpoints/traffic-chart';
import { isApiError } from '@/lib/api';
import '@/components/endpoints/endpoints.css';
import { endpointDetailQuery } from '@/lib/queries/endpoints';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

export default function EndpointDetailPage() {
  const { id } = useParams<{ id: string }>();
  const client = useClient();
  const router = useRouter();
  const { teamName } = useTeam();
  const detail = useQuery(endpointDetailQuery(client, id));
  const crumbs = (
    <>
      <Link href="/endpoints">Endpoints</Link> <span className="crumb-sep">/</span>
    </>
  );
  if (!detail.data) {
    return (
      <>
        <PageHeader title={detail.isError ? 'Endpoint' : 'Loading endpoint…'} crumbs={crumbs} />
        {detail.isError ? (
          isApiError(detail.error) && detail.error.status === 404 ? (
            <Empty>
              No endpoint <code>{id}</code>. <Link href="/endpoints">Back to endpoints</Link>
            </Empty>
          ) : (
            <ErrorPanel error={detail.error} onRetry={() => void detail.refetch()} title="Cannot load the endpoint" />
          )
        ) : (
          <Loading />
        )}
      </>
    );
  }
  const e = detail.data;
  return (
    <div data-testid="endpoint-detail" data-endpoint-id={e.id} data-state={e.state}>
      <PageHeader
        crumbs={crumbs}
        title={e.name}
        subtitle={
          <>
            <span className="mono">{e.id}</span> · team {teamName(e.teamId)} · {e.model}
            <span className="live-dot" title="Refreshed every 2 seconds" />
          </>
        }
        actions={<EndpointDelete endpoint={e} onDeleted={() => router.push('/endpoints')} />}
      />
      <EndpointCard endpoint={e} />
      <section className="section">
        <h2 className="section-title">Call it</h2>
        <EndpointCallSnippet endpointId={e.id} />
      </section>
      <section className="section">
        <h2 className="section-title">Settings</h2>
        <EndpointSettingsEditor endpoint={e} />
      </section>
      <section className="section">
        <h2 className="section-title">Replicas</h2>
        <EndpointReplicas endpoint={e} />
      </section>
      <section className="section">
        <h2 className="section-title">Traffic, last 60 s</h2>
        <EndpointTrafficChart traffic={e.traffic} />
      </section>
      <section className="section">
        <h2 className="section-title">Cold starts</h2>
        <ColdStartHistory endpoint={e} />
      </section>
    </div>
  );
}
