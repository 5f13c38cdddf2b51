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

/** GPU-hours, measured use, energy and cost by group over a range ending now. */
export const utilizationReportQuery = (client: GantryClient, groupBy: UtilizationGroupBy, range: ReportRange) =>
  queryOptions({
    queryKey: utilizationKeys.report(groupBy, range, REPORT_RANGES[range].step),
    queryFn: () => {
      const to = new Date();
      return client.utilization.report({
        groupBy,
        from: new Date(to.getTime() - REPORT_RANGES[range].ms).toISOString(),
        to: to.toISOString(),
        step: REPORT_RANGES[range].step,
      });
    },
    refetchInterval: 30_000,
  });

/** Allocated but idle GPUs, largest first. */
export const idleAllocationsQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: utilizationKeys.idle(),
    queryFn: () => client.utilization.idle({ limit: 10 }),
    refetchInterval: 15_000,
  });

/** Live per-GPU samples of the whole cluster (column-oriented). */
export const heatmapQuery = (client: GantryClient) =>
  queryOptions({
    queryKey: utilizationKeys.heatmap(),
    queryFn: () => client.utilization.gpus(),
    refetchInterval: 10_000,
  });
