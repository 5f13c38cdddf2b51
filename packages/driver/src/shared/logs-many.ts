/**
 * logsMany() for any driver: the driver's own when it has one, else every job's logs(), at most
 * `concurrency` in flight; one answer per request, in order, null where a read failed (or the
 * driver has no logs at all).
 */
import type { ClusterDriver, JobLogRequest, JobLogs } from '../types';
import { mapBounded } from './bounded-map';

export async function logsOfMany(driver: ClusterDriver, requests: readonly JobLogRequest[], concurrency = 8): Promise<(JobLogs | null)[]> {
  if (requests.length === 0) return [];
  if (driver.logsMany) return driver.logsMany(requests);
  const read = driver.logs?.bind(driver);
  if (!read) return requests.map(() => null);
  return mapBounded(requests, concurrency, (r) => read(r.jobId, r.query).catch(() => null));
}
