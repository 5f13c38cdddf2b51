'use client';

import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import type { Gpu, NodeDetail } from '@gantry/contracts';
import { GpuCell } from '@/components/gpu-cell';
import { PageHeader } from '@/components/page-header';
import { GPU_HEALTH_TONE, NODE_STATE_TONE, Pill } from '@/components/state-badge';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { isApiError } from '@/lib/api';
import { age, formatGpus, formatMiB } from '@/lib/format';
import { migCompute } from '@/lib/gpu';
import { nodeDetailQuery } from '@/lib/queries/nodes';
import { useClient } from '@/lib/session';
import { useNow } from '@/lib/use-now';

export default function NodeDetailPage() {
  const { id } = useParams<{ id: string }>();
  const client = useClient();
  const node = useQuery(nodeDetailQuery(client, id));
  const crumbs = (
    <>
      <Link href="/cluster">Cluster</Link> <span className="crumb-sep">/</span>
    </>
  );
  if (!node.data) {
    return (
      <>
        <PageHeader title={node.isError ? 'Node' : 'Loading node…'} crumbs={crumbs} />
        {node.isError ? (
          isApiError(node.error) && node.error.status === 404 ? (
            <Empty>
              No node <code>{id}</code>. <Link href="/cluster">Back to the cluster</Link>
            </Empty>
          ) : (
            <ErrorPanel error={node.error} onRetry={() => void node.refetch()} title="Cannot load the node" />
          )
        ) : (
          <Loading />
        )}
      </>
    );
  }
  return <NodeView node={node.data} crumbs={crumbs} />;
}

function NodeView({ node, crumbs }: { node: NodeDetail; crumbs: React.ReactNode }) {
  const now = useNow(5000);
  const gpus = [...node.gpus].sort((a, b) => a.index - b.index);
  const labels = Object.entries(node.labels).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div data-testid="node-detail" data-node-name={node.name} data-state={node.state}>
      <PageHeader
        crumbs={
          <>
            {crumbs} <span className="muted">{node.spine}</span> <span className="crumb-sep">/</span>{' '}
            <span className="muted">{node.leaf}</span> <span className="crumb-sep">/</span>
          </>
        }
        title={
          <>
            <span className="mono">{node.name}</span>{' '}
            <Pill tone={NODE_STATE_TONE[node.state]} testId="node-state">
              {node.state}
            </Pill>
          </>
        }
        subtitle={
          <>
            <span className={`persona persona-${node.persona}`}>{node.persona}</span> · {node.gpuCount} x {node.gpuModel ?? 'no GPU'} ·{' '}
            {formatGpus(node.gpusAllocated)} allocated · heartbeat {node.heartbeatAt ? `${age(node.heartbeatAt, now)} ago` : 'never'}
          </>
        }
      />
      <div className="detail-grid">
        <div className="card">
          <div className="card-head">
            <span className="card-title">Node</span>
          </div>
          <dl className="kv">
            <dt>Spine / leaf</dt>
            <dd className="mono">
              {node.spine} / {node.leaf}
            </dd>
            <dt>Persona</dt>
            <dd>{node.persona}</dd>
            <dt>CPU</dt>
            <dd className="mono">{node.cpuMilli / 1000} cores</dd>
            <dt>Memory</dt>
            <dd className="mono">{formatMiB(node.memoryMiB)}</dd>
            <dt>GPUs</dt>
            <dd>
              <div className="gpu-row gpu-row-lg">
                {gpus.map((g) => (
                  <GpuCell key={g.id} gpu={g} />
                ))}
              </div>
            </dd>
          </dl>
        </div>
        <div className="card">
          <div className="card-head">
            <span className="card-title">Labels</span>
          </div>
          {labels.length === 0 ? (
            <div className="muted pad">No labels.</div>
          ) : (
            <dl className="kv kv-labels">
              {labels.map(([k, v]) => (
                <div key={k} className="kv-row">
                  <dt className="mono">{k}</dt>
                  <dd className="mono">{v}</dd>
                </div>
              ))}
            </dl>
          )}
        </div>
      </div>

      <section className="section">
        <h2 className="section-title">GPUs</h2>
        {gpus.length === 0 ? (
          <Empty>This node has no GPU.</Empty>
        ) : (
          <div className="card table-card">
            <table className="table" data-testid="node-gpus">
              <thead>
                <tr>
                  <th className="num">#</th>
                  <th>Model</th>
                  <th className="num">Memory</th>
                  <th className="num">NVLink</th>
                  <th>Health</th>
                  <th>Mode</th>
                  <th className="wide">Use</th>
                </tr>
              </thead>
              <tbody>
                {gpus.map((g) => (
                  <tr key={g.id} data-testid="gpu-row" data-gpu-index={g.index} data-health={g.health} data-mode={g.mode}>
                    <td className="num mono">{g.index}</td>
                    <td>{g.model}</td>
                    <td className="num mono">{formatMiB(g.memoryMiB)}</td>
                    <td className="num mono">{g.nvlinkDomain}</td>
                    <td>
                      <Pill tone={GPU_HEALTH_TONE[g.health]}>{g.health}</Pill>
                    </td>
                    <td>{g.mode}</td>
                    <td>
                      <GpuUse gpu={g} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

function JobLink({ id }: { id: string }) {
  return (
    <Link href={`/jobs/${id}`} className="mono job-chip" title={id}>
      {id.length > 14 ? `${id.slice(0, 12)}…` : id}
    </Link>
  );
}

/** Whole: the job; MIG: the layout on 8 memory slots; shared: the used share. */
function GpuUse({ gpu }: { gpu: Gpu }) {
  if (gpu.mode === 'whole') return gpu.jobId ? <JobLink id={gpu.jobId} /> : <span className="muted">free</span>;
  if (gpu.mode === 'shared') {
    const used = (gpu.sharedMilliUsed ?? 0) / 1000;
    return (
      <div className="share">
        <div className="bar bar-sm">
          <span className="bar-seg bar-alloc" style={{ width: `${Math.min(100, used * 100)}%` }} />
        </div>
        <span className="mono small">{Math.round(used * 100)}% shared</span>
      </div>
    );
  }
  const layout = [...(gpu.mig?.layout ?? [])].sort((a, b) => a.start - b.start);
  const compute = layout.reduce((n, s) => n + migCompute(s.profile), 0);
  const computeUsed = layout.filter((s) => s.jobId).reduce((n, s) => n + migCompute(s.profile), 0);
  return (
    <div className="mig">
      <div className="mig-grid" data-testid="mig-layout" title="MIG slices on the 8 memory slots">
        {Array.from({ length: 8 }, (_, i) => (
          <span key={`slot${i}`} className="mig-slot" style={{ gridColumn: `${i + 1} / span 1` }} />
        ))}
        {layout.map((s) => (
          <span
            key={`${s.start}-${s.profile}`}
            className={`mig-slice${s.jobId ? ' mig-used' : ''}`}
            style={{ gridColumn: `${s.start + 1} / span ${Math.max(1, s.size)}` }}
            data-testid="mig-slice"
            data-profile={s.profile}
            data-start={s.start}
            title={`${s.profile} at slot ${s.start}${s.jobId ? ` · job ${s.jobId}` : ' · free'}`}
          >
            {s.size >= 2 ? s.profile : s.profile.split('.')[0]}
          </span>
        ))}
      </div>
      <span className="mono small muted">
        {computeUsed}/7 compute in use{compute < 7 ? ` · ${7 - compute} not partitioned` : ''}
      </span>
    </div>
  );
}
