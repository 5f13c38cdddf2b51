/**
 * logsMany() for any driver: the driver's own when it has one, else every job's logs(), at most
 * `concurrency` in flight; one answer per request, in order, null where a read failed (or the
 * driver has no logs at all).
 */
import type { ClusterDriver, JobLogRequest, JobLogs } from '../types';

export async function logsOfMany(driver: ClusterDriver, requests: readonly JobLogRequest[], concurrency = 8): Promise<(JobLogs | null)[]> {
  if (requests.length === 0) return [];
  if (driver.logsMany) return driver.logsMany(requests);
  const read = driver.logs?.bind(driver);
  const out = new Array<JobLogs | null>(requests.length).fill(null);
  if (!read) return out;
  let next = 0;
  const lane = async () => {
    while (next < requests.length) {
      const i = next++;
      out[i] = await read(requests[i]!.jobId, requests[i]!.query).catch(() => null);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, lane));
  return out;
}
