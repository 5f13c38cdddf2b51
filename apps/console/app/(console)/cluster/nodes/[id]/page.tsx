'use client';

import Link from 'next/link';
import { useParams } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import type { Gpu, NodeDetail } from '@gantry/contracts';
import { GpuCell } from '@/components/gpu-cell';
import { PageHeader } from '@/components/page-header';
import { GPU_HEALTH_TONE, NODE_STATE_TONE, Pill, PowerPill } from '@/components/state-badge';
import { BareMetalBadge } from '@/components/bare-metal-badge';
import { Timeline } from '@/components/timeline';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { isApiError } from '@/lib/api';
import { age, formatGpus, formatMiB } from '@/lib/format';
import { nodeDetailQuery } from '@/lib/queries/nodes';
import { isOperator, meQuery } from '@/lib/queries/me';
import { MigLayout } from '@/components/mig-layout';
import { MigEditorButton } from '@/components/mig-layout-editor';
import { FaultInjector } from '@/components/fault-injector';
import { NodeActions } from '@/components/node-actions';
import { NodeTransition } from '@/components/node-transition';
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
  const client = useClient();
  const me = useQuery(meQuery(client));
  const admin = isOperator(me.data);
  const gpus = [...node.gpus].sort((a, b) => a.index - b.index);
  const labels = Object.entries(node.labels).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div data-testid="node-detail" data-node-name={node.name} data-state={node.state}>
      <PageHeader
        crumbs={
          <>
            {crumbs} <span className="muted">{node.spine}</span> <span className="crumb-sep">/</span> <span className="muted">{node.leaf}</span>{' '}
            <span className="crumb-sep">/</span>
          </>
        }
        title={
          <>
            <span className="mono">{node.name}</span>{' '}
            <Pill tone={NODE_STATE_TONE[node.state]} testId="node-state">
              {node.state}
            </Pill>{' '}
            <PowerPill power={node.powerState} /> <BareMetalBadge bareMetal={node.bareMetal} />
          </>
        }
        subtitle={
          <>
            <span className={`persona persona-${node.persona}`}>{node.persona}</span> · {node.gpuCount} x {node.gpuModel ?? 'no GPU'} ·{' '}
            {formatGpus(node.gpusAllocated)} allocated · heartbeat {node.heartbeatAt ? `${age(node.heartbeatAt, now)} ago` : 'never'}
            {node.stateReason && (
              <>
                {' '}
                · <span data-testid="node-state-reason">{node.stateReason}</span>
              </>
            )}
          </>
        }
        actions={admin ? <NodeActions node={node} /> : undefined}
      />
      {node.transition && (
        <div className="card pad transition-card">
          <NodeTransition node={node} />
        </div>
      )}
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
            <dd data-testid="node-persona">
              {node.persona}
              {node.personaTarget && <span className="muted"> → {node.personaTarget}</span>}
            </dd>
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
                  {admin && <th>MIG layout</th>}
                </tr>
              </thead>
              <tbody>
                {gpus.map((g) => (
                  <tr key={g.id} data-testid="gpu-row" data-gpu-index={g.index} data-health={g.health} data-mode={g.mode} data-schedulable={g.schedulable}>
                    <td className="num mono">{g.index}</td>
                    <td>{g.model}</td>
                    <td className="num mono">{formatMiB(g.memoryMiB)}</td>
                    <td className="num mono">{g.nvlinkDomain}</td>
                    <td>
                      <Pill tone={GPU_HEALTH_TONE[g.health]}>{g.health}</Pill>
                    </td>
                    <td>
                      {g.mode}
                      {!g.schedulable && (
                        <div>
                          <Pill tone="info" testId="gpu-applying">
                            {g.migTarget ? 'MIG change' : 'out of scheduling'}
                          </Pill>
                        </div>
                      )}
                    </td>
                    <td>
                      <GpuUse gpu={g} />
                      {g.migTarget && (
                        <div className="mig-target-row">
                          <span className="small muted">applying →</span>{' '}
                          {g.migTarget.length ? <MigLayout gpu={g} target /> : <span className="small mono">MIG off (whole GPU)</span>}
                        </div>
                      )}
                    </td>
                    {admin && (
                      <td>
                        <MigEditorButton gpu={g} node={node} />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="section">
        <h2 className="section-title">Events</h2>
        {node.events.length === 0 ? <Empty>No events you can see yet.</Empty> : <Timeline events={node.events} testId="node-events" itemTestId="node-event" />}
      </section>

      {admin && (
        <section className="section">
          <h2 className="section-title">Simulate a fault</h2>
          <FaultInjector node={node} />
        </section>
      )}
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
  return <MigLayout gpu={gpu} />;
}
