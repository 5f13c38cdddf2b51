import { queryOptions } from '@tanstack/react-query';
import type { UtilizationGroupBy } from '@gantry/contracts';
import type { GantryClient } from '../api';

export const utilizationKeys = {
  all: ['utilization'] as const,
  capacity: () => [...utilizationKeys.all, 'capacity'] as const,
  report: (groupBy: UtilizationGroupBy, range: string, step: string) => [...utilizationKeys.all, 'report', groupBy, range, step] as const,
  idle: () => [...utilizationKeys.all, 'idle'] as const,
  heatmap: () => [...utilizationKeys.all, 'heatmap'] as const,
};

/** GPUs by model: total, allocated, free, unhealthy. */
export const capacityQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: utilizationKeys.capacity(),
    queryFn: () => client.utilization.capacity(),
    refetchInterval: 5000,
  });

/** Report ranges offered by the console: label, length and bucket width. */
export const REPORT_RANGES = {
  '24h': { label: 'Last 24 hours', ms: 24 * 3600_000, step: '15m' },
  '7d': { label: 'Last 7 days', ms: 7 * 24 * 3600_000, step: '1h' },
  '30d': { label: 'Last 30 days', ms: 30 * 24 * 3600_000, step: '6h' },
} as const;
export type ReportRange = keyof typeof REPORT_RANGES;

/** What a report covers: a preset range ending now, or a window a person picked (ISO instants). */
export type ReportWindow = { range: ReportRange } | { from: string; to: string };

/** The from/to/step a report window asks for (a picked window leaves the bucket width to the API). */
export function windowQuery(w: ReportWindow, now = new Date()): { from: string; to: string; step?: string } {
  if ('from' in w) return { from: w.from, to: w.to };
  const r = REPORT_RANGES[w.range];
  return { from: new Date(now.getTime() - r.ms).toISOString(), to: now.toISOString(), step: r.step };
}

/** GPU-hours, measured use, energy and cost by group over a preset range ending now, or a picked window. */
export const utilizationReportQuery = (client: GantryClient, groupBy: UtilizationGroupBy, w: ReportWindow) =>
  queryOptions({
    queryKey: utilizationKeys.report(groupBy, 'from' in w ? `${w.from}/${w.to}` : w.range, 'from' in w ? 'auto' : REPORT_RANGES[w.range].step),
    queryFn: () => client.utilization.report({ groupBy, ...windowQuery(w) }),
    // a picked window is fixed in time; a preset one moves with now
    refetchInterval: 'from' in w ? false : 30_000,
  });

/** Allocated but idle GPUs, largest first. */
export const idleAllocationsQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: utilizationKeys.idle(),
    queryFn: () => client.utilization.idle({ limit: 10 }),
    refetchInterval: 15_000,
  });

/**
 * A heatmap request started before the page could render (see `prefetchHeatmap`): the
 * signed-in shell renders pages only once `/v1/me` has answered, so the page's own request
 * would start after it. Taken once by the first heatmap fetch with the same key.
 */
let prefetched: { apiKey: string; at: number; answer: ReturnType<GantryClient['utilization']['gpus']> } | null = null;
/** A prefetch older than this is not used (the heatmap refreshes every 10 s anyway). */
const PREFETCH_MAX_AGE_MS = 10_000;

/**
 * Starts `GET /v1/utilization/gpus` now, in parallel with `/v1/me`, when a key is known.
 * Called when the heatmap page's module loads in the browser; the page's query uses the answer.
 */
export function prefetchHeatmap(apiKey: string | null, makeClientFor: (apiKey: string) => GantryClient): void {
  if (!apiKey || (prefetched && prefetched.apiKey === apiKey && Date.now() - prefetched.at < PREFETCH_MAX_AGE_MS)) return;
  const answer = makeClientFor(apiKey).utilization.gpus();
  // A failed prefetch is not reported here: the page's query asks again and shows the error.
  answer.catch(() => undefined);
  prefetched = { apiKey, at: Date.now(), answer };
}

function takePrefetchedHeatmap(apiKey: string | null) {
  const p = prefetched;
  if (!p || apiKey === null || p.apiKey !== apiKey) return null;
  prefetched = null;
  return Date.now() - p.at > PREFETCH_MAX_AGE_MS ? null : p.answer;
}

/** Live per-GPU samples of the whole cluster (column-oriented). */
export const heatmapQuery = (client: GantryClient, apiKey: string | null = null) =>
  queryOptions({
    queryKey: utilizationKeys.heatmap(),
    queryFn: () => takePrefetchedHeatmap(apiKey)?.catch(() => client.utilization.gpus()) ?? client.utilization.gpus(),
    refetchInterval: 10_000,
  });
