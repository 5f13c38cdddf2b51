'use client';

import type { EndpointDetail } from '@gantry/contracts';
import { Empty } from '@/components/states';
import { formatTime } from '@/lib/format';

export const formatMs = (ms: number | null) => (ms === null ? '—' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

/** The latest cold starts: when the request arrived at zero, how long it waited, and who took it. */
export function ColdStartHistory({ endpoint }: { endpoint: EndpointDetail }) {
  const c = endpoint.coldStarts;
  if (endpoint.coldStartHistory.length === 0) return <Empty>No cold start yet: a request at zero replicas records one.</Empty>;
  return (
    <div className="card table-card">
      <div className="pad muted small" data-testid="cold-start-summary">
        {c.count} cold start{c.count === 1 ? '' : 's'} · p50 {formatMs(c.p50Ms)} · p95 {formatMs(c.p95Ms)}
        {c.count > endpoint.coldStartHistory.length ? ` · the latest ${endpoint.coldStartHistory.length} below` : ''}
      </div>
      <table className="table" data-testid="cold-start-history">
        <thead>
          <tr>
            <th>Request arrived</th>
            <th className="num">Waited</th>
            <th>Served by</th>
          </tr>
        </thead>
        <tbody>
          {endpoint.coldStartHistory.map((h) => (
            <tr key={h.startedAt} data-testid="cold-start-row" data-warm={h.warm}>
              <td>{formatTime(h.startedAt)}</td>
              <td className="num mono">{formatMs(h.durationMs)}</td>
              <td>{h.warm ? 'a warm-pool replica' : 'a new replica (placed, model loaded)'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
