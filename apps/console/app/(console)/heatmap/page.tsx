'use client';

import { useState } from 'react';
import { useRouter } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import { PageHeader } from '@/components/page-header';
import { ErrorPanel, Loading } from '@/components/states';
import { HEATMAP_METRICS, HeatmapCanvas, HeatmapLegend, type HeatmapMetric } from '@/components/utilization/heatmap-canvas';
import { formatTime } from '@/lib/format';
import { makeClient } from '@/lib/api';
import { heatmapQuery, prefetchHeatmap } from '@/lib/queries/utilization';
import { useClient, useSession } from '@/lib/session';
import { getApiKey } from '@/lib/storage';

// The shell renders this page only after `/v1/me` has answered: ask for the GPUs now, as the
// page's code loads in the browser, so both requests run at the same time.
if (typeof window !== 'undefined') prefetchHeatmap(getApiKey(), makeClient);

export default function HeatmapPage() {
  const client = useClient();
  const { apiKey } = useSession();
  const router = useRouter();
  const heat = useQuery(heatmapQuery(client, apiKey));
  const [metric, setMetric] = useState<HeatmapMetric>('sm');

  return (
    <>
      <PageHeader
        title="GPU heatmap"
        subtitle={
          heat.data
            ? `${heat.data.gpus.id.length} GPUs on ${heat.data.nodes.length} nodes · sampled ${formatTime(heat.data.at)}`
            : 'Every GPU of the cluster, live'
        }
      />
      <div className="util-toolbar">
        <label>
          Show
          <select className="select-sm" data-testid="heatmap-metric" value={metric} onChange={(e) => setMetric(e.target.value as HeatmapMetric)}>
            {Object.entries(HEATMAP_METRICS).map(([k, m]) => (
              <option key={k} value={k}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        <HeatmapLegend metric={metric} />
      </div>
      <div className="card pad" data-testid="heatmap">
        {heat.isError ? (
          <ErrorPanel error={heat.error} onRetry={() => void heat.refetch()} title="Cannot load the GPU samples" />
        ) : !heat.data ? (
          <Loading />
        ) : (
          <HeatmapCanvas data={heat.data} metric={metric} onOpenNode={(name) => router.push(`/cluster/nodes/${encodeURIComponent(name)}`)} />
        )}
      </div>
    </>
  );
}
