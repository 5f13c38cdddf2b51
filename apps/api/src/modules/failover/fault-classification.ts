/**
 * What a health event means and what the failover loop does about it (docs/reference/gpu.md section 3).
 * Pure: the failover service turns a classification into cordons, drains and remediation.
 *
 * - Application Xids (13, 31, 43, 45, 68, 109): the application is at fault, not the hardware.
 *   The device plugin ignores them; we restart the job only and quarantine nothing.
 * - Xids that need a GPU reset (NVIDIA's RESET_GPU bucket): ECC double-bit / uncontained (48, 95),
 *   row-remapping failure (64), NVLink (74), GSP errors (119, 120), fallen off the bus (79, which
 *   escalates to a node reboot when the reset does not bring the GPU back).
 * - Xids that leave the GPU working until the next reset (63 row remap pending, 92 high single-bit
 *   ECC rate, 94 contained ECC): the GPU is degraded; its jobs are checkpointed and moved, then reset.
 * - Any other Xid the device plugin would call critical: quarantine the GPU, reset it.
 * - NIC down: the node cannot serve multi-node work: cordon it and move its multi-node gangs.
 * - Node down (event or missed heartbeats): cordon, reschedule everything, reboot, validate.
 */

export const APPLICATION_XIDS: ReadonlySet<number> = new Set([13, 31, 43, 45, 68, 109]);
/** Xids after which the GPU keeps running its work until it is reset (contained or pending repairs). */
export const DEGRADING_XIDS: ReadonlySet<number> = new Set([63, 92, 94]);
/** Xids whose fix is a GPU reset (RESET_GPU bucket); 79 escalates to a reboot. */
export const RESET_XIDS: ReadonlySet<number> = new Set([48, 64, 74, 79, 95, 119, 120]);

export type FaultScope = 'none' | 'gpu' | 'node';
export type Remediation = 'restart-job' | 'reset-gpu' | 'reboot-node' | 'wait-nic';
export type Severity = 'low' | 'medium' | 'high' | 'critical';

export interface FaultClass {
  kind: 'xid' | 'nic-down' | 'node-down';
  /** What is taken out of scheduling. */
  scope: FaultScope;
  /** Health the GPU gets (xid on a GPU). */
  gpuHealth?: 'healthy' | 'degraded' | 'unhealthy';
  remediation: Remediation;
  /** Remediation to try when the first one does not validate. */
  escalation?: Remediation;
  /** Which jobs must move: the GPU's, the node's, or only the node's multi-node gangs. */
  moves: 'gpu-jobs' | 'node-jobs' | 'multi-node-jobs';
  /** Whether the moved jobs are checkpointed first (they still run) or are already gone. */
  checkpoint: boolean;
  severity: Severity;
  summary: string;
}

export function classifyXid(xid: number): FaultClass {
  if (APPLICATION_XIDS.has(xid)) {
    return {
      kind: 'xid',
      scope: 'none',
      gpuHealth: 'healthy',
      remediation: 'restart-job',
      moves: 'gpu-jobs',
      checkpoint: true,
      severity: 'low',
      summary: `Xid ${xid} is an application fault: the job is restarted, the GPU stays in service`,
    };
  }
  if (DEGRADING_XIDS.has(xid)) {
    return {
      kind: 'xid',
      scope: 'gpu',
      gpuHealth: 'degraded',
      remediation: 'reset-gpu',
      escalation: 'reboot-node',
      moves: 'gpu-jobs',
      checkpoint: true,
      severity: 'medium',
      summary: `Xid ${xid}: the GPU needs a reset; its jobs are checkpointed and moved, then the GPU is reset`,
    };
  }
  const known = RESET_XIDS.has(xid);
  return {
    kind: 'xid',
    scope: 'gpu',
    gpuHealth: 'unhealthy',
    remediation: 'reset-gpu',
    escalation: 'reboot-node',
    moves: 'gpu-jobs',
    checkpoint: false,
    severity: xid === 79 || xid === 95 || xid === 48 ? 'critical' : 'high',
    summary: known
      ? `Xid ${xid}: GPU quarantined, its jobs rescheduled, GPU reset (reboot if the reset does not bring it back)`
      : `Xid ${xid} (critical): GPU quarantined, its jobs rescheduled, GPU reset`,
  };
}

export function classifyNodeDown(source: 'event' | 'heartbeat'): FaultClass {
  return {
    kind: 'node-down',
    scope: 'node',
    remediation: 'reboot-node',
    moves: 'node-jobs',
    checkpoint: false,
    severity: 'critical',
    summary: source === 'heartbeat' ? 'node missed its heartbeats past the grace period: node down' : 'node down',
  };
}

export function classifyNicDown(): FaultClass {
  return {
    kind: 'nic-down',
    scope: 'node',
    remediation: 'wait-nic',
    moves: 'multi-node-jobs',
    checkpoint: true,
    severity: 'high',
    summary: 'network interface down: node cordoned for multi-node work, its multi-node gangs moved',
  };
}

/** A job exit the failover loop owns: the cluster took the job away, the job did not fail. */
export function isFailoverExit(reason: string | undefined): boolean {
  return reason === 'node-lost' || reason === 'gpu-fault' || reason === 'evicted';
}
