/**
 * The invariants the checker proves over the database, named after what an operator would
 * call the failure. Strict rules hold at every instant (every write that could break them is
 * one transaction); settled rules hold only once the system has been quiet for a while.
 */
export const STRICT_RULES = [
  // family 1: GPU slots (slots.ts)
  'slot-double-booked',
  'allocation-mode-mismatch',
  // family 2-3: MIG (mig.ts)
  'mig-instance-missing',
  'mig-layout-invalid',
  'gpu-mode-instances-mismatch',
  // family 4: the unique slot key (slots.ts)
  'active-slot-mismatch',
  // family 5: quotas (quotas.ts)
  'team-over-quota',
  // family 6-8: holders (holders.ts)
  'allocation-orphaned',
  'idle-job-holds-gpus',
  'job-allocations-incomplete',
  'job-fields-inconsistent',
  'replica-allocations-incomplete',
  'replica-active-key-mismatch',
] as const;

export const SETTLED_RULES = [
  // settled.ts
  'job-stuck-in-transition',
  'gpu-mig-change-stuck',
  'node-transition-stuck',
  'pending-job-unexplained',
  'allocation-on-failed-hardware',
] as const;

export type StrictRule = (typeof STRICT_RULES)[number];
export type SettledRule = (typeof SETTLED_RULES)[number];
export type InvariantRule = StrictRule | SettledRule;

export interface InvariantViolation {
  rule: InvariantRule;
  /** Ids, e.g. "gpu c...:mig:4" or "job c...". */
  subject: string;
  /** Plain English an operator understands. */
  message: string;
}

export interface InvariantReport {
  ok: boolean;
  checkedAt: string;
  settled: boolean;
  counts: { jobs: number; activeAllocations: number; gpus: number; migSlices: number; endpointReplicas: number };
  violations: InvariantViolation[];
}

export interface CheckOptions {
  /** Also check the settled rules (the caller vouches the system has been quiet for graceSeconds). */
  settled?: boolean;
  now?: Date;
  /** Default 30. */
  graceSeconds?: number;
}
