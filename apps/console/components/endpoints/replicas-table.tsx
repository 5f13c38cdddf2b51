'use client';

import Link from 'next/link';
import type { EndpointDetail } from '@gantry/contracts';
import { Empty } from '@/components/states';
import { formatTime } from '@/lib/format';

type Gpu = EndpointDetail['replicaList'][number]['gpus'][number];
const gpuText = (g: Gpu) => `GPU ${g.index}${g.migProfile ? ` · ${g.migProfile}` : g.fraction !== undefined ? ` · ${g.fraction} share` : ''}`;

/** Every replica: serving or warm, ready or loading the model, on which node and GPUs. */
export function EndpointReplicas({ endpoint }: { endpoint: EndpointDetail }) {
  if (endpoint.replicaList.length === 0) {
    return <Empty>No replica: {endpoint.state === 'scaled-to-zero' ? 'scaled to zero; the next request starts one.' : 'waiting for placement.'}</Empty>;
  }
  return (
    <div className="card table-card">
      <table className="table" data-testid="endpoint-replicas">
        <thead>
          <tr>
            <th className="num">Replica</th>
            <th>Role</th>
            <th>State</th>
            <th>Node</th>
            <th>GPUs</th>
            <th>Started</th>
            <th>Ready</th>
          </tr>
        </thead>
        <tbody>
          {endpoint.replicaList.map((r) => (
            <tr key={r.replica} data-testid="endpoint-replica-row" data-state={r.state} data-serving={r.serving}>
              <td className="num mono">{r.replica}</td>
              <td>{r.serving ? 'serving' : 'warm pool'}</td>
              <td>{r.state === 'ready' ? 'ready' : 'loading the model'}</td>
              <td className="mono">{r.nodeName ?? <span className="muted">not placed</span>}</td>
              <td className="mono">{r.gpus.map(gpuText).join(', ') || '-'}</td>
              <td>{formatTime(r.createdAt)}</td>
              <td>{formatTime(r.readyAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="muted small pad">
        Replicas hold GPUs under the team&apos;s quota; see them on the <Link href="/cluster">cluster</Link>.
      </div>
    </div>
  );
}
