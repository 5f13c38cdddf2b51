import type { PrismaClient } from '@gantry/db';
import type { CheckOptions, InvariantReport, InvariantViolation } from './types';
import { loadClusterState } from './load';
import type { ClusterState } from './state';
import { checkActiveSlots, checkAllocationModes, checkSlots } from './slots';
import { checkMigLayouts, checkMigSlicesExist } from './mig';
import { checkQuotas } from './quotas';
import { checkHolders, checkJobs, checkReplicas } from './holders';
import { checkSettled } from './settled';

/** The strict rules over a loaded state (pure). */
export function strictViolations(s: ClusterState): InvariantViolation[] {
  return [
    ...checkSlots(s),
    ...checkAllocationModes(s),
    ...checkMigSlicesExist(s),
    ...checkMigLayouts(s),
    ...checkActiveSlots(s),
    ...checkQuotas(s),
    ...checkHolders(s),
    ...checkJobs(s),
    ...checkReplicas(s),
  ];
}

/** Reads the database (one snapshot) and reports every violated invariant. */
export async function checkInvariants(db: PrismaClient, options: CheckOptions = {}): Promise<InvariantReport> {
  const now = options.now ?? new Date();
  const settled = options.settled ?? false;
  const state = await loadClusterState(db);
  const violations = strictViolations(state);
  if (settled) violations.push(...checkSettled(state, now, options.graceSeconds ?? 30));
  return {
    ok: violations.length === 0,
    checkedAt: now.toISOString(),
    settled,
    counts: {
      jobs: state.totalJobs,
      activeAllocations: state.allocations.length,
      gpus: state.gpus.length,
      migSlices: state.instances.length,
      endpointReplicas: state.replicas.filter((r) => r.endedAt === null).length,
    },
    violations,
  };
}
