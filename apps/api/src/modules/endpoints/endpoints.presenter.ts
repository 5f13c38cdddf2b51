import type { ColdStartStats, Endpoint, EndpointDetail, JobResources } from '@gantry/contracts';
import type { EndpointRow } from './endpoints.repository';
import type { AutoscalerState } from './endpoint-traffic.service';
import { presentResources } from '../jobs/jobs.presenter';

/** Nearest-rank percentile of ascending values. */
export function percentile(sortedAsc: number[], p: number): number | null {
  if (!sortedAsc.length) return null;
  const i = Math.min(sortedAsc.length - 1, Math.max(0, Math.ceil((p / 100) * sortedAsc.length) - 1));
  return sortedAsc[i]!;
}

export function coldStartStats(recentFirst: { durationMs: number }[]): ColdStartStats {
  const sorted = recentFirst.map((c) => c.durationMs).sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), lastMs: recentFirst[0]?.durationMs ?? null };
}

export function presentEndpoint(row: EndpointRow, coldStarts: { durationMs: number }[]): Endpoint {
  const r = row.resources as JobResources;
  const serving = row.replicas.filter((x) => x.serving);
  const ready = serving.filter((x) => x.state === 'ready').length;
  const starting = serving.length - ready;
  const warm = row.replicas.filter((x) => !x.serving).length;
  const state = ready === 0 && row.desiredReplicas === 0 ? 'scaled-to-zero' : ready >= row.desiredReplicas && starting === 0 ? 'ready' : 'scaling';
  return {
    id: row.id,
    teamId: row.teamId,
    name: row.name,
    model: row.model,
    resources: presentResources(r),
    minReplicas: row.minReplicas,
    maxReplicas: row.maxReplicas,
    targetConcurrency: row.targetConcurrency,
    scaleToZeroAfterSeconds: row.scaleToZeroAfterSeconds,
    warmPool: row.warmPool,
    desiredReplicas: row.desiredReplicas,
    state,
    replicas: { ready, starting, warm },
    coldStarts: coldStartStats(coldStarts),
    createdAt: row.createdAt.toISOString(),
    ...(row.lastRequestAt ? { lastRequestAt: row.lastRequestAt.toISOString() } : {}),
  };
}

/** Cold starts listed on an endpoint's detail, newest first. */
export const COLD_START_HISTORY = 20;

export function presentEndpointDetail(
  row: EndpointRow,
  coldStarts: { durationMs: number; startedAt: Date; warm: boolean }[],
  extra: { traffic: EndpointDetail['traffic']; autoscaler: AutoscalerState | null; reasons: EndpointDetail['reasons'] },
): EndpointDetail {
  return {
    ...presentEndpoint(row, coldStarts),
    replicaList: row.replicas.map((rep) => {
      const allocs = row.allocations.filter((a) => a.replica === rep.replica);
      return {
        replica: rep.replica,
        state: rep.state === 'ready' ? ('ready' as const) : ('starting' as const),
        serving: rep.serving,
        ...(allocs[0] ? { nodeName: allocs[0].node.name } : {}),
        gpus: allocs.map((a) => ({
          gpuId: a.gpuId,
          index: a.gpu.index,
          ...(a.migProfile ? { migProfile: a.migProfile } : {}),
          ...(a.milli < 1000 && !a.migProfile ? { fraction: a.milli / 1000 } : {}),
        })),
        createdAt: rep.createdAt.toISOString(),
        ...(rep.readyAt ? { readyAt: rep.readyAt.toISOString() } : {}),
      };
    }),
    traffic: extra.traffic,
    autoscaler: extra.autoscaler
      ? {
          panic: extra.autoscaler.panic,
          observedConcurrency: Math.round(extra.autoscaler.observedConcurrency * 10) / 10,
          observedRps: Math.round(extra.autoscaler.observedRps * 10) / 10,
          recommended: extra.autoscaler.recommended,
          reason: extra.autoscaler.reason,
        }
      : null,
    reasons: extra.reasons,
    coldStartHistory: coldStarts.slice(0, COLD_START_HISTORY).map((c) => ({ startedAt: c.startedAt.toISOString(), durationMs: c.durationMs, warm: c.warm })),
  };
}
