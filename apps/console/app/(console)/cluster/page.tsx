'use client';

import { useMemo, useState } from 'react';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { Gpu, Node } from '@gantry/contracts';
import { GpuCell, GpuLegend } from '@/components/gpu-cell';
import { NodeTransition } from '@/components/node-transition';
import { PageHeader } from '@/components/page-header';
import { NODE_STATE_TONE, Pill, PowerPill } from '@/components/state-badge';
import { BareMetalBadge } from '@/components/bare-metal-badge';
import { Empty, ErrorPanel, Loading } from '@/components/states';
import { formatGpus } from '@/lib/format';
import { gpuStatus } from '@/lib/gpu';
import { gpusListQuery } from '@/lib/queries/gpus';
import { nodesListQuery } from '@/lib/queries/nodes';
import { useClient } from '@/lib/session';

export default function ClusterPage() {
  const client = useClient();
  const nodes = useQuery(nodesListQuery(client));
  const gpus = useQuery(gpusListQuery(client));
  const [model, setModel] = useState('');
  const [filter, setFilter] = useState('');

  const gpusByNode = useMemo(() => {
    const m = new Map<string, Gpu[]>();
    for (const g of gpus.data ?? []) {
      const list = m.get(g.nodeId) ?? [];
      list.push(g);
      m.set(g.nodeId, list);
    }
    for (const list of m.values()) list.sort((a, b) => a.index - b.index);
    return m;
  }, [gpus.data]);

  const models = useMemo(() => [...new Set((nodes.data ?? []).map((n) => n.gpuModel).filter((m): m is string => !!m))].sort(), [nodes.data]);

  const tree = useMemo(() => {
    const q = filter.trim().toLowerCase();
    const shown = (nodes.data ?? []).filter(
      (n) => (!model || n.gpuModel === model) && (!q || n.name.toLowerCase().includes(q) || n.leaf.toLowerCase().includes(q)),
    );
    const spines = new Map<string, Map<string, Node[]>>();
    for (const n of shown) {
      const leaves = spines.get(n.spine) ?? new Map<string, Node[]>();
      const list = leaves.get(n.leaf) ?? [];
      list.push(n);
      leaves.set(n.leaf, list);
      spines.set(n.spine, leaves);
    }
    const byName = (a: string, b: string) => a.localeCompare(b, undefined, { numeric: true });
    return [...spines.entries()]
      .sort(([a], [b]) => byName(a, b))
      .map(([spine, leaves]) => ({
        spine,
        leaves: [...leaves.entries()].sort(([a], [b]) => byName(a, b)).map(([leaf, list]) => ({ leaf, nodes: list.sort((a, b) => byName(a.name, b.name)) })),
      }));
  }, [nodes.data, model, filter]);

  const all = nodes.data ?? [];
  const stateCounts = all.reduce<Record<string, number>>((acc, n) => ((acc[n.state] = (acc[n.state] ?? 0) + 1), acc), {});
  const gpuCounts = (gpus.data ?? []).reduce<Record<string, number>>((acc, g) => {
    const s = gpuStatus(g);
    acc[s] = (acc[s] ?? 0) + 1;
    return acc;
  }, {});

  return (
    <>
      <PageHeader
        title="Cluster"
        subtitle={
          nodes.data ? (
            <>
              {all.length} nodes · {gpus.data?.length ?? '…'} GPUs
              {Object.entries(stateCounts).map(([s, c]) => (
                <span key={s}>
                  {' '}
                  · {c} {s}
                </span>
              ))}
            </>
          ) : (
            'Topology, node personas and GPU health'
          )
        }
        actions={
          <>
            <input
              className="input-sm"
              placeholder="Filter nodes or leaves"
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
              data-testid="cluster-filter"
            />
            <select className="select-sm" value={model} onChange={(e) => setModel(e.target.value)} data-testid="cluster-model-filter" aria-label="GPU model">
              <option value="">All models</option>
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </>
        }
      />
      {gpus.data && (
        <div className="legend-row">
          <GpuLegend counts={gpuCounts} />
        </div>
      )}
      {nodes.isError && !nodes.data ? (
        <ErrorPanel error={nodes.error} onRetry={() => void nodes.refetch()} title="Cannot load nodes" />
      ) : !nodes.data ? (
        <Loading />
      ) : tree.length === 0 ? (
        <Empty>{all.length === 0 ? 'No nodes registered.' : 'No node matches the filter.'}</Empty>
      ) : (
        <>
          {gpus.isError && <ErrorPanel error={gpus.error} onRetry={() => void gpus.refetch()} title="Cannot load GPUs" />}
          <div className="topology" data-testid="topology">
            {tree.map(({ spine, leaves }) => (
              <section className="spine" key={spine} data-testid="spine" data-spine={spine}>
                <h2 className="spine-title">
                  <span className="topo-kind">spine</span> {spine}
                  <span className="muted"> · {leaves.reduce((n, l) => n + l.nodes.length, 0)} nodes</span>
                </h2>
                {leaves.map(({ leaf, nodes: leafNodes }) => {
                  const total = leafNodes.reduce((n, x) => n + x.gpuCount, 0);
                  const used = leafNodes.reduce((n, x) => n + x.gpusAllocated, 0);
                  return (
                    <div className="leaf" key={leaf} data-testid="leaf" data-leaf={leaf}>
                      <h3 className="leaf-title">
                        <span className="topo-kind">leaf</span> {leaf}
                        <span className="muted">
                          {' '}
                          · {leafNodes.length} nodes · {formatGpus(used)}/{total} GPUs allocated
                        </span>
                      </h3>
                      <div className="node-grid">
                        {leafNodes.map((n) => (
                          <NodeCard key={n.id} node={n} gpus={gpusByNode.get(n.id)} />
                        ))}
                      </div>
                    </div>
                  );
                })}
              </section>
            ))}
          </div>
        </>
      )}
    </>
  );
}

function NodeCard({ node, gpus }: { node: Node; gpus: Gpu[] | undefined }) {
  const cells = Array.from({ length: Math.max(node.gpuCount, gpus?.length ?? 0) }, (_, i) => gpus?.find((g) => g.index === i) ?? gpus?.[i]);
  return (
    <Link
      href={`/cluster/nodes/${node.id}`}
      className={`node-card node-${node.state} power-${node.powerState}`}
      data-testid="node-card"
      data-node-id={node.id}
      data-node-name={node.name}
      data-state={node.state}
      data-persona={node.persona}
      data-power={node.powerState}
      title={node.stateReason ?? undefined}
    >
      <div className="node-head">
        <span className="node-name mono">{node.name}</span>
        <Pill tone={NODE_STATE_TONE[node.state]} testId="node-state">
          {node.state}
        </Pill>
        <PowerPill power={node.powerState} />
        <BareMetalBadge bareMetal={node.bareMetal} />
      </div>
      <div className="node-meta">
        <span className={`persona persona-${node.persona}`}>{node.persona}</span>
        <span className="muted node-model">{node.gpuModel ?? 'no GPU'}</span>
        <span className="muted node-alloc">
          {formatGpus(node.gpusAllocated)}/{node.gpuCount}
        </span>
      </div>
      <NodeTransition node={node} compact />
      {cells.length > 0 && (
        <div className="gpu-row">{cells.map((g, i) => (g ? <GpuCell key={g.id} gpu={g} /> : <span key={`x${i}`} className="gpu-cell gpu-unknown" />))}</div>
      )}
    </Link>
  );
}
