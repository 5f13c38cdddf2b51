'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { describeChange, type AuditEntry } from '@gantry/contracts';
import { PageHeader } from '@/components/page-header';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { auditQuery, type AuditRange } from '@/lib/queries/admin';
import { describeError } from '@/lib/api';
import { useClient } from '@/lib/session';
import { formatTime } from '@/lib/format';

/** Who changed what, through which key or session, from where. */
export default function AuditPage() {
  const client = useClient();
  const [action, setAction] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [fromLocal, setFromLocal] = useState('');
  const [toLocal, setToLocal] = useState('');
  const [refusedOnly, setRefusedOnly] = useState(false);
  const range: AuditRange = { from: isoOf(fromLocal), to: isoOf(toLocal), outcome: refusedOnly ? 'refused' : undefined };
  const audit = useQuery(auditQuery(client, action, range));
  const [exportError, setExportError] = useState<unknown>(null);
  const exportCsv = async () => {
    setExportError(null);
    try {
      const csv = await client.audit.csv({ action: action || undefined, ...range });
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = 'gantry-audit.csv';
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } catch (e) {
      setExportError(e);
    }
  };
  return (
    <>
      <PageHeader
        title="Audit log"
        subtitle="Every change made through the API, and every refused attempt: actor, key or session, source address, what was changed (by name), each changed field's value before → after, and the request (secrets redacted). A team admin sees the changes of their team."
        actions={
          <>
            <input
              className="input-sm"
              data-testid="audit-filter"
              placeholder="Filter by action, e.g. quotas"
              value={action}
              onChange={(e) => setAction(e.target.value)}
              aria-label="Filter by action"
            />
            <label className="small">
              From{' '}
              <input type="datetime-local" className="input-sm" data-testid="audit-from" value={fromLocal} onChange={(e) => setFromLocal(e.target.value)} />
            </label>
            <label className="small">
              To <input type="datetime-local" className="input-sm" data-testid="audit-to" value={toLocal} onChange={(e) => setToLocal(e.target.value)} />
            </label>
            <label className="small">
              <input type="checkbox" data-testid="audit-refused-only" checked={refusedOnly} onChange={(e) => setRefusedOnly(e.target.checked)} /> Refused only
            </label>
            <button type="button" className="btn btn-outline btn-sm" data-testid="audit-export" onClick={() => void exportCsv()}>
              Export CSV
            </button>
          </>
        }
      />
      {exportError !== null && (
        <div className="alert alert-error small" role="alert" data-testid="audit-export-error">
          {describeError(exportError)}
        </div>
      )}
      {audit.isError ? (
        <ErrorPanel error={audit.error} onRetry={() => void audit.refetch()} title="Cannot load the audit log" />
      ) : !audit.data ? (
        <Loading />
      ) : audit.data.items.length === 0 ? (
        <Empty>
          No changes recorded{action ? ` for “${action}”` : ''}
          {range.from || range.to ? ' in this time range' : ''}.
        </Empty>
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
      <tr data-testid="audit-row" data-action={e.action} data-outcome={e.outcome} className="row-link" onClick={onToggle}>
        <td className="nowrap">{formatTime(e.createdAt)}</td>
        <td data-testid="audit-actor">{e.actor}</td>
        <td>
          {/* the key's id in full on hover (and in the CSV export); its last characters tell keys apart */}
          <span className="tag" title={e.apiKeyId ?? undefined}>
            {via === 'session' ? 'session' : `key …${(e.apiKeyId ?? '').slice(-6)}`}
          </span>
        </td>
        <td className="mono" data-testid="audit-action">
          {e.action}
          {e.outcome === 'refused' && (
            <span className="badge badge-bad" data-testid="audit-refused" title={refusalOf(e)}>
              refused {String(e.data.status ?? '')}
            </span>
          )}
          {e.changes && (
            <ul className="audit-changes small" data-testid="audit-changes">
              {Object.entries(e.changes).map(([field, c]) => (
                <li key={field} data-testid="audit-change">
                  {describeChange(field, c)}
                </li>
              ))}
            </ul>
          )}
        </td>
        <td data-testid="audit-target" title={e.target ?? undefined}>
          {e.targetName ?? <span className="mono">{e.target ?? '–'}</span>}
        </td>
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

function refusalOf(e: AuditEntry): string | undefined {
  const err = e.data.error as { message?: string } | undefined;
  return err?.message;
}

/** A datetime-local value (the browser's local time) as an ISO instant; undefined when empty. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}
