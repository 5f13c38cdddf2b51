import type { InvariantViolation } from './types';
import type { ClusterState } from './state';

/**
 * Rules that hold only once the system has been quiet for `graceSeconds`: each describes a
 * transient state the product passes through on purpose (a placed job starting, a checkpoint,
 * a MIG change waiting for idle slices, a drain, a node just marked down before its jobs are
 * moved, a job queued before the cycle explained it) and must leave.
 */
export function checkSettled(s: Pick<ClusterState, 'jobs' | 'gpus' | 'nodes' | 'allocations'>, now: Date, graceSeconds: number): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const limit = now.getTime() - graceSeconds * 1000;

  // Jobs: placed but never started, or a checkpoint that never finished.
  for (const j of s.jobs) {
    if (j.state === 'starting' || j.state === 'suspending') {
      out.push({
        rule: 'job-stuck-in-transition',
        subject: `job ${j.id}`,
        message: `job ${j.id} is still ${j.state} after the system went quiet: ${j.state === 'starting' ? 'placed but never reported running' : 'its checkpoint never completed'}`,
      });
    }
    if (j.state === 'pending' && (!Array.isArray(j.reasons) || j.reasons.length === 0)) {
      out.push({
        rule: 'pending-job-unexplained',
        subject: `job ${j.id}`,
        message: `job ${j.id} is pending with no reason: an operator cannot tell why it waits`,
      });
    }
  }

  // GPUs out of scheduling: a MIG change in flight is the only reason, and it must end.
  for (const g of s.gpus) {
    const inFlight = g.migTarget !== null && g.migTarget !== undefined;
    if (!g.schedulable && !inFlight) {
      out.push({
        rule: 'gpu-mig-change-stuck',
        subject: `gpu ${g.id}`,
        message: `GPU ${g.id} is out of scheduling with no MIG change in flight: nothing will bring it back`,
      });
    } else if (inFlight && (!g.migRequestedAt || g.migRequestedAt.getTime() < limit)) {
      out.push({
        rule: 'gpu-mig-change-stuck',
        subject: `gpu ${g.id}`,
        message: `GPU ${g.id} has a MIG change requested ${g.migRequestedAt ? `at ${g.migRequestedAt.toISOString()}` : 'at an unknown time'}, still not applied after ${graceSeconds} s`,
      });
    }
  }

  // Nodes switching persona or draining past their ETA (a drain has no ETA: its start counts).
  for (const n of s.nodes) {
    if (n.state !== 'switching' && n.state !== 'draining') continue;
    const due = n.transitionEtaAt ?? n.transitionStartedAt;
    if (!due || due.getTime() < limit) {
      out.push({
        rule: 'node-transition-stuck',
        subject: `node ${n.id}`,
        message: `node ${n.name} (${n.id}) is still ${n.state}${n.transitionEtaAt ? ` past its ETA ${n.transitionEtaAt.toISOString()}` : ''} (+${graceSeconds} s grace)`,
      });
    }
  }

  // Work left on failed hardware: failover marks the node down / GPU unhealthy first, then moves the jobs.
  const downNodes = new Map(s.nodes.filter((n) => n.state === 'down').map((n) => [n.id, n]));
  const badGpus = new Set(s.gpus.filter((g) => g.health === 'unhealthy').map((g) => g.id));
  for (const a of s.allocations) {
    const node = downNodes.get(a.nodeId);
    if (!node && !badGpus.has(a.gpuId)) continue;
    const where = node ? `node ${node.name} (${node.id}), which is down` : `GPU ${a.gpuId}, which is unhealthy`;
    out.push({
      rule: 'allocation-on-failed-hardware',
      subject: `allocation ${a.id}`,
      message: `allocation ${a.id} (${a.jobId ? `job ${a.jobId}` : `endpoint ${a.endpointId} replica ${a.replica}`}) still holds ${where}`,
    });
  }
  return out;
}
