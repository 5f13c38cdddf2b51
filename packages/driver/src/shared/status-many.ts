/**
 * statusMany() for any driver: the driver's own when it has one, else every job's status(), at
 * most `concurrency` in flight; one status per id, in the order asked.
 */
import type { ClusterDriver, WorkloadStatus } from '../types';

export async function statusOfMany(driver: ClusterDriver, jobIds: readonly string[], concurrency = 16): Promise<WorkloadStatus[]> {
  if (jobIds.length === 0) return [];
  if (driver.statusMany) return driver.statusMany(jobIds);
  const out = new Array<WorkloadStatus>(jobIds.length);
  let next = 0;
  const lane = async () => {
    while (next < jobIds.length) {
      const i = next++;
      out[i] = await driver.status(jobIds[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobIds.length) }, lane));
  return out;
}
