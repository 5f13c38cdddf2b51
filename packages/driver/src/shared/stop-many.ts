/**
 * stop() of many jobs for any driver: the driver's own stopMany when it has one (one call), else
 * every job's stop(), at most `concurrency` in flight. Returns the stops that failed, each with
 * its error; the others are stopped (or were unknown: stop is idempotent).
 */
import type { ClusterDriver } from '../types';
import { mapBounded } from './bounded-map';

export interface StopFailure {
  jobId: string;
  error: Error;
}

export async function stopEach(driver: ClusterDriver, jobIds: readonly string[], concurrency = 16): Promise<StopFailure[]> {
  if (jobIds.length === 0) return [];
  if (driver.stopMany) {
    const errors = await driver.stopMany(jobIds);
    return jobIds.flatMap((jobId, i) => (errors[i] ? [{ jobId, error: errors[i]! }] : []));
  }
  const failed: StopFailure[] = [];
  await mapBounded(jobIds, concurrency, (jobId) =>
    driver.stop(jobId).catch((e: unknown) => void failed.push({ jobId, error: e instanceof Error ? e : new Error(String(e)) })),
  );
  return failed;
}
