import type { WorkloadStatus } from '@gantry/driver';

/**
 * Burn-in, the last gate of the failover loop (docs/reference/gpu.md section 3, burn-in): a GPU reset or node reboot is
 * followed by a diagnostic under load on the repaired hardware before it goes back into
 * service, because idle health checks miss faults that show only under load. Pure rules here;
 * BurnInService runs them.
 *
 *   remediated, idle check passes --(burn-in needed)--> burn-in
 *   burn-in --passed-->                                 back in service, resolved
 *   burn-in --failed, failures < max-->                 repaired again (reset / reboot), burn-in again
 *   burn-in --failed, failures = max-->                 needs-attention (stays quarantined)
 *   burn-in --lost (node went down, worker restarted)-> remediating (validated again, burn-in again; not a failure)
 *   needs-attention --operator: retry-->                burn-in (failures start over)
 *   needs-attention --operator: release-->              back in service, resolved
 */

/** Incidents whose repair is verified by a burn-in: the hardware was reset or rebooted. */
export function needsBurnIn(enabled: boolean, inc: { scope: string; remediation: string; attempts: number }): boolean {
  return enabled && inc.attempts > 0 && (inc.scope === 'gpu' || inc.scope === 'node') && ['reset-gpu', 'reboot-node'].includes(inc.remediation);
}

/** The GPUs a burn-in loads: the quarantined GPU of a GPU incident, every GPU of a node incident. */
export function burnInGpus(scope: string, gpuCount: number, gpuIndex: number | undefined): number[] {
  if (scope === 'gpu' && gpuIndex !== undefined) return [gpuIndex];
  return Array.from({ length: gpuCount }, (_, i) => i);
}

export type BurnInVerdict = 'running' | 'passed' | 'failed' | 'lost';

/** What the driver's status of the burn-in workload means. */
export function burnInVerdict(s: WorkloadStatus): BurnInVerdict {
  if (s.state === 'running') return 'running';
  if (s.state === 'unknown') return 'lost';
  if (s.exitCode === 0) return 'passed';
  // taken away by the cluster (node lost, eviction): it did not finish, it did not fail
  if (s.reason === 'node-lost' || s.reason === 'evicted') return 'lost';
  return 'failed';
}

export type BurnInNext = 'wait' | 'return-to-service' | 'repair-and-retry' | 'needs-attention' | 'start-again';

/** The next step after a verdict, and the failure count it leaves. */
export function nextAfterBurnIn(verdict: BurnInVerdict, failures: number, maxFailures: number): { next: BurnInNext; failures: number } {
  switch (verdict) {
    case 'running':
      return { next: 'wait', failures };
    case 'passed':
      return { next: 'return-to-service', failures };
    case 'lost':
      return { next: 'start-again', failures };
    case 'failed': {
      const now = failures + 1;
      return { next: now >= maxFailures ? 'needs-attention' : 'repair-and-retry', failures: now };
    }
  }
}

const PREFIX = 'burnin-';

/** Driver job id of a burn-in (a valid Kubernetes label value: the incident id and a run stamp). */
export function burnInJobId(incidentId: string, at: number): string {
  return `${PREFIX}${incidentId}-${at.toString(36)}`;
}

/** The incident of a burn-in workload, or undefined for any other job. */
export function incidentOfBurnIn(jobId: string): string | undefined {
  if (!jobId.startsWith(PREFIX)) return undefined;
  const rest = jobId.slice(PREFIX.length);
  const dash = rest.lastIndexOf('-');
  return dash > 0 ? rest.slice(0, dash) : undefined;
}

/** How often the loop looks at a running burn-in (the driver's exit event usually comes first). */
export function burnInPollMs(seconds: number, simSpeed: number): number {
  return Math.min(5000, Math.max(200, Math.round((seconds * 1000) / simSpeed / 10)));
}
