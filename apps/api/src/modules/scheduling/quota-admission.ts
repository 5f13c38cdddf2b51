import type { Reason } from '@gantry/contracts';

export interface AdmissionJob {
  id: string;
  teamId: string;
  gpuModel?: string;
  /** GPU units the whole job needs (all replicas). */
  units: number;
}

export interface TeamQuota {
  teamId: string;
  gpuModel: string;
  limit: number;
}

/**
 * Step 3 of the cycle, admission: a job is admitted while its team stays within its quota
 * limit for the job's GPU model (a model row, else the `*` row; no row = no limit). Jobs
 * come in queue order; each admitted job counts against the team for the ones after it.
 */
export function admit<J extends AdmissionJob>(
  jobs: J[],
  usage: { teamId: string; gpuModel: string; units: number }[],
  quotas: TeamQuota[],
): { admitted: J[]; held: { jobId: string; reasons: Reason[] }[] } {
  const used = new Map<string, number>();
  const add = (k: string, n: number) => used.set(k, (used.get(k) ?? 0) + n);
  for (const u of usage) {
    add(`${u.teamId}|${u.gpuModel}`, u.units);
    add(`${u.teamId}|*`, u.units);
  }
  const admitted: J[] = [];
  const held: { jobId: string; reasons: Reason[] }[] = [];
  for (const job of jobs) {
    const quota =
      (job.gpuModel && quotas.find((q) => q.teamId === job.teamId && q.gpuModel === job.gpuModel)) ||
      quotas.find((q) => q.teamId === job.teamId && q.gpuModel === '*');
    if (!quota) {
      admitted.push(job);
      continue;
    }
    const key = `${job.teamId}|${quota.gpuModel}`;
    const inUse = used.get(key) ?? 0;
    if (inUse + job.units > quota.limit + 1e-9) {
      const scope = quota.gpuModel === '*' ? 'GPUs' : `${quota.gpuModel} GPUs`;
      held.push({
        jobId: job.id,
        reasons: [
          {
            code: 'quota_limit',
            message: `team quota ${fmt(inUse)}/${fmt(quota.limit)} ${scope} in use; this job needs ${fmt(job.units)} more`,
          },
        ],
      });
      continue;
    }
    add(key, job.units);
    if (quota.gpuModel !== '*') add(`${job.teamId}|*`, job.units);
    admitted.push(job);
  }
  return { admitted, held };
}

const fmt = (n: number) => String(Math.round(n * 1000) / 1000);
