'use client';

import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Pill } from '@/components/state-badge';
import { ErrorPanel, Loading } from '@/components/states';
import { integrityQuery } from '@/lib/queries/integrity';
import { useClient } from '@/lib/session';
import { formatTime } from '@/lib/format';

const count = (n: number, what: string) => `${n.toLocaleString()} ${what}${n === 1 ? '' : 's'}`;

/**
 * Operators: the database's books (no GPU slot held twice, valid MIG layouts, no team over its
 * limit, no orphaned allocation, consistent jobs; settled: nothing stuck in a transition).
 */
export function IntegrityPanel() {
  const client = useClient();
  const [settled, setSettled] = useState(false);
  const q = useQuery(integrityQuery(client, settled));
  if (q.isError && !q.data) return <ErrorPanel error={q.error} onRetry={() => void q.refetch()} title="Cannot check integrity" />;
  if (!q.data) return <Loading />;
  const r = q.data;
  return (
    <div className="card" data-testid="integrity" data-ok={r.ok} data-settled={r.settled} data-violations={r.violations.length}>
      <div className="card-head">
        <span className="card-title">
          Integrity <Pill tone={r.ok ? 'ok' : 'bad'}>{r.ok ? 'no invariant violated' : `${r.violations.length} violation(s)`}</Pill>
        </span>
        <span className="muted small">
          {count(r.counts.jobs, 'job')} · {count(r.counts.activeAllocations, 'active allocation')} · {count(r.counts.gpus, 'GPU')} ·{' '}
          {count(r.counts.migSlices, 'MIG slice')} · checked {formatTime(r.checkedAt)} in {r.ms} ms{' '}
          <label className="small">
            <input type="checkbox" checked={settled} onChange={(e) => setSettled(e.target.checked)} data-testid="integrity-settled" /> also stuck transitions
          </label>{' '}
          <button type="button" className="btn btn-sm" onClick={() => void q.refetch()} disabled={q.isFetching} data-testid="integrity-check">
            {q.isFetching ? 'Checking…' : 'Check now'}
          </button>
        </span>
      </div>
      {r.violations.length > 0 && (
        <table className="table small" data-testid="integrity-violations">
          <thead>
            <tr>
              <th>Rule</th>
              <th>Subject</th>
              <th>What is wrong</th>
            </tr>
          </thead>
          <tbody>
            {r.violations.slice(0, 100).map((v) => (
              <tr key={`${v.rule} ${v.subject}`} data-testid="integrity-violation" data-rule={v.rule}>
                <td className="mono">{v.rule}</td>
                <td className="mono">{v.subject}</td>
                <td>{v.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
