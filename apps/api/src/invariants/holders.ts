import type { InvariantViolation } from './types';
import { groupBy, HOLDING_STATES, IDLE_STATES, kindOf, TERMINAL_STATES, type AllocationKind, type AllocationRow, type ClusterState } from './state';

/** What one replica holds, from its resources (JobResources: exactly one of gpus, migProfile, gpuFraction). */
export interface ReplicaNeed {
  count: number;
  kind: AllocationKind;
  migProfile?: string;
}

/** Rows a replica's commit creates (toAllocations): one per whole GPU, one MIG slice, or one share. Null when unreadable. */
export function replicaNeed(resources: unknown): ReplicaNeed | null {
  const r = (resources ?? {}) as { gpus?: unknown; migProfile?: unknown; gpuFraction?: unknown };
  if (typeof r.gpus === 'number' && r.gpus >= 1) return { count: r.gpus, kind: 'whole' };
  if (typeof r.migProfile === 'string') return { count: 1, kind: 'mig', migProfile: r.migProfile };
  if (typeof r.gpuFraction === 'number' && r.gpuFraction > 0 && r.gpuFraction < 1) return { count: 1, kind: 'share' };
  return null;
}

/** Differences between what a replica holds and what it needs ([] when they match). */
export function replicaShortfall(need: ReplicaNeed, held: Pick<AllocationRow, 'migProfile' | 'milli'>[]): string[] {
  const problems: string[] = [];
  if (held.length !== need.count) problems.push(`holds ${held.length} GPU allocation(s), needs ${need.count}`);
  const wrong = held.filter((a) => kindOf(a) !== need.kind || (need.migProfile !== undefined && a.migProfile !== need.migProfile));
  if (wrong.length)
    problems.push(
      `${wrong.length} allocation(s) are not ${need.kind === 'mig' ? `MIG slices ${need.migProfile}` : need.kind === 'whole' ? 'whole GPUs' : 'GPU shares'}`,
    );
  return problems;
}

/**
 * Family 6, live holders: an active allocation belongs to exactly one holder, a job or an
 * endpoint replica of the same team; the job has not ended (an allocation of a finished job is
 * leaked: every end releases in the same transaction), the replica is active (same endpoint and
 * index, endedAt null). Jobs waiting or parked with GPUs are family 7 (idle-job-holds-gpus).
 */
export function checkHolders(s: Pick<ClusterState, 'allocations' | 'jobs' | 'replicas'>): InvariantViolation[] {
  const jobs = new Map(s.jobs.map((j) => [j.id, j]));
  const live = new Map(s.replicas.filter((r) => r.endedAt === null).map((r) => [`${r.endpointId}:${r.replica}`, r]));
  const endpointTeam = new Map(s.replicas.map((r) => [r.endpointId, r.teamId]));
  const out: InvariantViolation[] = [];
  const orphan = (a: AllocationRow, why: string) =>
    out.push({
      rule: 'allocation-orphaned',
      subject: `allocation ${a.id}`,
      message: `allocation ${a.id} on GPU ${a.gpuId} ${why}: the GPU is held by nobody who will release it`,
    });
  for (const a of s.allocations) {
    // A bare-metal lease holds its nodes' GPUs until the wipe gives them back (docs/bare-metal.md).
    if (a.bareMetalLeaseId && a.jobId === null && a.endpointId === null) continue;
    if ((a.jobId === null) === (a.endpointId === null)) {
      orphan(a, a.jobId ? `names both job ${a.jobId} and endpoint ${a.endpointId}` : 'names neither a job nor an endpoint');
    } else if (a.jobId) {
      const job = jobs.get(a.jobId);
      if (!job) orphan(a, `names job ${a.jobId}, which does not exist`);
      else if (TERMINAL_STATES.includes(job.state)) orphan(a, `belongs to job ${job.id}, which is ${job.state}`);
      else if (job.teamId !== a.teamId) orphan(a, `is charged to team ${a.teamId} but its job ${job.id} belongs to team ${job.teamId}`);
    } else {
      const rep = live.get(`${a.endpointId}:${a.replica}`);
      if (!rep) orphan(a, `belongs to replica ${a.replica} of endpoint ${a.endpointId}, which is not active`);
      else if (endpointTeam.get(a.endpointId!) !== a.teamId)
        orphan(a, `is charged to team ${a.teamId} but endpoint ${a.endpointId} belongs to team ${endpointTeam.get(a.endpointId!)}`);
    }
  }
  return out;
}

/**
 * Family 7, job states: pending and suspended jobs hold nothing (every transition into them
 * releases in the same transaction); starting, running and suspending jobs (placed, running,
 * checkpointing) hold exactly what each replica needs, placed and released all or nothing;
 * finished jobs have finishedAt, unfinished ones none; running has startedAt and runningSince,
 * and only running or suspending jobs keep runningSince; reasons is an array.
 */
export function checkJobs(s: Pick<ClusterState, 'allocations' | 'jobs'>): InvariantViolation[] {
  const byJob = groupBy(
    s.allocations.filter((a) => a.jobId),
    (a) => a.jobId!,
  );
  const out: InvariantViolation[] = [];
  for (const job of s.jobs) {
    const held = byJob.get(job.id) ?? [];
    const subject = `job ${job.id}`;
    if (IDLE_STATES.includes(job.state) && held.length) {
      out.push({
        rule: 'idle-job-holds-gpus',
        subject,
        message: `job ${job.id} is ${job.state} but still holds ${held.length} GPU allocation(s) (${held.map((a) => a.id).join(', ')}); it could be placed a second time`,
      });
    }
    if (HOLDING_STATES.includes(job.state)) {
      const need = replicaNeed(job.resources);
      const problems: string[] = [];
      if (!need) problems.push('its resources name no GPUs');
      else {
        const byReplica = groupBy(held, (a) => a.replica);
        for (let r = 0; r < job.replicas; r++) for (const p of replicaShortfall(need, byReplica.get(r) ?? [])) problems.push(`replica ${r} ${p}`);
        const extra = held.filter((a) => a.replica < 0 || a.replica >= job.replicas);
        if (extra.length) problems.push(`${extra.length} allocation(s) name replicas the job does not have (it has ${job.replicas})`);
      }
      if (problems.length) out.push({ rule: 'job-allocations-incomplete', subject, message: `job ${job.id} is ${job.state}: ${problems.join('; ')}` });
    }
    const fields: string[] = [];
    const terminal = TERMINAL_STATES.includes(job.state);
    if (terminal && !job.finishedAt) fields.push(`is ${job.state} without finishedAt`);
    if (!terminal && job.finishedAt) fields.push(`is ${job.state} but has finishedAt`);
    if (job.state === 'running' && !job.startedAt) fields.push('is running without startedAt');
    if (job.state === 'running' && !job.runningSince) fields.push('is running without runningSince (its progress cannot be counted)');
    if (job.runningSince && job.state !== 'running' && job.state !== 'suspending') fields.push(`is ${job.state} but keeps runningSince`);
    if (!Array.isArray(job.reasons)) fields.push('has reasons that are not a list');
    if (fields.length) out.push({ rule: 'job-fields-inconsistent', subject, message: `job ${job.id} ${fields.join('; ')}` });
  }
  return out;
}

/**
 * Family 8, endpoint replicas: an active replica holds what its endpoint's resources need (the
 * replica row and its allocations are one commit, and stopReplica ends both); activeKey is
 * `<endpointId>:<replica>` exactly while the replica is active.
 */
export function checkReplicas(s: Pick<ClusterState, 'allocations' | 'replicas'>): InvariantViolation[] {
  const byReplica = groupBy(
    s.allocations.filter((a) => a.endpointId),
    (a) => `${a.endpointId}:${a.replica}`,
  );
  const out: InvariantViolation[] = [];
  for (const r of s.replicas) {
    const key = `${r.endpointId}:${r.replica}`;
    const subject = `endpoint ${r.endpointId}:replica:${r.replica}`;
    if (r.endedAt === null) {
      const need = replicaNeed(r.resources);
      const problems = need ? replicaShortfall(need, byReplica.get(key) ?? []) : ['its endpoint resources name no GPUs'];
      if (problems.length) out.push({ rule: 'replica-allocations-incomplete', subject, message: `active replica ${r.id} (${subject}) ${problems.join('; ')}` });
    }
    const want = r.endedAt === null ? key : null;
    if (r.activeKey !== want) {
      out.push({
        rule: 'replica-active-key-mismatch',
        subject,
        message:
          r.endedAt === null
            ? `active replica ${r.id} has activeKey ${r.activeKey ?? 'null'} instead of ${key}: its index is not protected against a second replica`
            : `ended replica ${r.id} still holds activeKey ${r.activeKey}: replica index ${r.replica} can never be used again`,
      });
    }
  }
  return out;
}
