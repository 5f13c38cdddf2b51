/**
 * statusMany() for any driver: the driver's own when it has one, else every job's status(), at
 * most `concurrency` in flight; one status per id, in the order asked.
 */
import type { ClusterDriver, WorkloadStatus } from '../types';
import { mapBounded } from './bounded-map';

export async function statusOfMany(driver: ClusterDriver, jobIds: readonly string[], concurrency = 16): Promise<WorkloadStatus[]> {
  if (jobIds.length === 0) return [];
  if (driver.statusMany) return driver.statusMany(jobIds);
  return mapBounded(jobIds, concurrency, (id) => driver.status(id));
}
