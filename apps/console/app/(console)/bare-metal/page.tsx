'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { BareMetalLease } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { Pill } from '@/components/state-badge';
import { BareMetalRequestForm } from '@/components/bare-metal-request-form';
import { BareMetalLeaseActions } from '@/components/bare-metal-lease-actions';
import { Timeline } from '@/components/timeline';
import { bareMetalListQuery } from '@/lib/queries/bare-metal';
import { useClient } from '@/lib/session';
import { useTeam } from '@/lib/team';

const TONE: Record<BareMetalLease['state'], string> = {
  pending: 'warn',
  provisioning: 'info',
  deployed: 'ok',
  suspending: 'info',
  suspended: 'warn',
  resuming: 'info',
  releasing: 'info',
  released: 'info',
};

/** Bare metal: whole nodes a team holds, provisioned with an OS image (docs/bare-metal.md). */
export default function BareMetalPage() {
  const client = useClient();
  const { teamId, team } = useTeam();
  const leases = useQuery(bareMetalListQuery(client, teamId || undefined));
  const [formOpen, setFormOpen] = useState(false);
  const [created, setCreated] = useState<BareMetalLease | null>(null);
  const items = leases.data ?? [];
  const held = items.reduce((s, l) => s + l.nodes.length, 0);

  return (
    <>
      <PageHeader
        title="Bare metal"
        subtitle={
          <>
            {team ? team.name : 'All teams'} · <span data-testid="bm-count-leases">{items.filter((l) => l.state !== 'released').length}</span> active leases ·{' '}
            {held} nodes held
            <span className="live-dot" title="Refreshed every 2 seconds" />
          </>
        }
        actions={
          <button type="button" className="btn btn-primary" data-testid="bm-open" onClick={() => setFormOpen(true)}>
            + Request nodes
          </button>
        }
      />
      <p className="muted">
        Whole nodes out of the container and VM pool, provisioned with your image; every GPU of a node counts against the team&apos;s quota until the lease is
        released. Suspend powers the nodes off and keeps them; release wipes the disks.
      </p>
      {created && (
        <div className="alert alert-ok flash" data-testid="bm-created">
          Requested {created.name} ({created.count} × {created.gpuModel} nodes).
          <button type="button" className="btn-close" aria-label="Dismiss" onClick={() => setCreated(null)}>
            ×
          </button>
        </div>
      )}
      {formOpen && (
        <BareMetalRequestForm
          onClose={() => setFormOpen(false)}
          onCreated={(l) => {
            setFormOpen(false);
            setCreated(l);
          }}
        />
      )}
      {leases.isLoading ? (
        <Loading />
      ) : leases.isError ? (
        <ErrorPanel error={leases.error} onRetry={() => void leases.refetch()} />
      ) : items.length === 0 ? (
        <Empty>No bare-metal leases yet.</Empty>
      ) : (
        <div className="card table-card">
          <table className="table" data-testid="bm-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>State</th>
                <th>Nodes</th>
                <th>GPUs held</th>
                <th>Image</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {items.map((l) => (
                <tr key={l.id} data-testid="bm-row" data-name={l.name} data-state={l.state}>
                  <td>
                    <strong>{l.name}</strong>
                    <div className="muted">
                      {l.count} × {l.gpuModel}
                      {l.sameLeaf ? ' · one leaf' : ''}
                    </div>
                  </td>
                  <td>
                    <Pill tone={TONE[l.state]} testId="bm-state">
                      {l.state}
                    </Pill>
                    {l.stateReason && <div className="muted">{l.stateReason}</div>}
                    {l.events.length > 0 && (
                      <details className="bm-events" data-testid="bm-events">
                        <summary>Events ({l.events.length})</summary>
                        <Timeline events={l.events} testId="bm-event-list" itemTestId="bm-event" />
                      </details>
                    )}
                  </td>
                  <td>
                    {l.nodes.length === 0
                      ? '—'
                      : l.nodes.map((n) => (
                          <div key={n.id} data-testid="bm-node">
                            {n.name} <span className="muted">({n.state})</span>
                          </div>
                        ))}
                  </td>
                  <td data-testid="bm-gpus">{l.gpusHeld}</td>
                  <td>
                    <code>{l.image}</code>
                  </td>
                  <td>
                    <BareMetalLeaseActions lease={l} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
