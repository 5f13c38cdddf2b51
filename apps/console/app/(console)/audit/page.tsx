'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { AuditEntry } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { auditQuery } from '@/lib/queries/admin';
import { useClient } from '@/lib/session';
import { formatTime } from '@/lib/format';

/** Who changed what, through which key or session, from where. */
export default function AuditPage() {
  const client = useClient();
  const [action, setAction] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const audit = useQuery(auditQuery(client, action));
  return (
    <>
      <PageHeader
        title="Audit log"
        subtitle="Every change made through the API: actor, key or session, source address, and the request (secrets redacted)."
        actions={
          <input
            className="input-sm"
            data-testid="audit-filter"
            placeholder="Filter by action, e.g. quotas"
            value={action}
            onChange={(e) => setAction(e.target.value)}
            aria-label="Filter by action"
          />
        }
      />
      {audit.isError ? (
        <ErrorPanel error={audit.error} onRetry={() => void audit.refetch()} title="Cannot load the audit log" />
      ) : !audit.data ? (
        <Loading />
      ) : audit.data.items.length === 0 ? (
        <Empty>No changes recorded{action ? ` for “${action}”` : ''}.</Empty>
      ) : (
        <div className="card table-card">
          <table className="table" data-testid="audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Actor</th>
                <th>Through</th>
                <th>Action</th>
                <th>Target</th>
                <th>Source</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.items.map((e) => (
                <Row key={e.id} e={e} open={open === e.id} onToggle={() => setOpen(open === e.id ? null : e.id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function Row({ e, open, onToggle }: { e: AuditEntry; open: boolean; onToggle: () => void }) {
  const via = (e.data.via as string | undefined) ?? (e.apiKeyId ? 'api-key' : 'session');
  return (
    <>
      <tr data-testid="audit-row" data-action={e.action} className="row-link" onClick={onToggle}>
        <td className="nowrap">{formatTime(e.createdAt)}</td>
        <td data-testid="audit-actor">{e.actor}</td>
        <td>
          <span className="tag">{via === 'session' ? 'session' : `key ${e.apiKeyId ?? ''}`}</span>
        </td>
        <td className="mono" data-testid="audit-action">
          {e.action}
        </td>
        <td className="mono">{e.target ?? '–'}</td>
        <td className="mono">{e.source ?? '–'}</td>
      </tr>
      {open && (
        <tr className="audit-detail">
          <td colSpan={6}>
            <pre className="mono" data-testid="audit-data">
              {JSON.stringify(e.data, null, 2)}
            </pre>
          </td>
        </tr>
      )}
    </>
  );
}
