import type { SimulatedDriver, StartRequest } from '@gantry/driver';

/**
 * When the cluster was asked to act, seen from the driver the bench built (it runs in-process):
 * the last MIG apply call and the first start call of each workload. With them a latency splits
 * into Gantry's orchestration before the driver, the driver's own (simulated) delay, and
 * Gantry's orchestration after it.
 */
export interface DriverProbe {
  /** ms (epoch) of the first start call of the workload (a job id or an endpoint replica id). */
  startedAt(workloadId: string): number | undefined;
  /** ms (epoch) of the last applyMigLayout call at or after `sinceMs`. */
  migApplyCalledAt(sinceMs: number): number | undefined;
}

export function probeDriver(driver: SimulatedDriver): DriverProbe {
  const starts = new Map<string, number>();
  const applies: number[] = [];
  const start = driver.start.bind(driver);
  const apply = driver.applyMigLayout.bind(driver);
  driver.start = (req: StartRequest) => {
    if (!starts.has(req.jobId)) starts.set(req.jobId, Date.now());
    return start(req);
  };
  driver.applyMigLayout = (...args: Parameters<SimulatedDriver['applyMigLayout']>) => {
    applies.push(Date.now());
    return apply(...args);
  };
  return {
    startedAt: (id) => starts.get(id),
    migApplyCalledAt: (sinceMs) => applies.filter((t) => t >= sinceMs).pop(),
  };
}
