/**
 * What other packages of the workspace may use from the API (package.json `exports`:
 * `@gantry/api/bench-support`): the benchmarks in packages/bench. Everything else in the API
 * is internal to it; a deep import (`@gantry/api/dist/...`) is refused by the exports map.
 */
export { startBenchWorker, type BenchWorker } from './worker-harness';
export { startBenchApi, type BenchApi } from './api-harness';
export { checkInvariants, type InvariantViolation } from '../invariants';
export { CRASH_POINTS } from '../common/crash-points';
export { parseConfig } from '../config/config';
export { PrismaService } from '../common/prisma.service';
export type { Principal } from '../common/principal';
export { UtilizationRepository } from '../modules/utilization/utilization.repository';
export { UtilizationService } from '../modules/utilization/utilization.service';
export { planMigChanges, type MigPlanningInput } from '../modules/node-manager/mig-planning';
export { PLAN_HOLD_SIM_SECONDS } from '../modules/node-manager/node-manager.loop';
export { ClusterRepository, nodeWithGpus } from '../modules/cluster/cluster.repository';
export { IncrementalSnapshot } from '../modules/cluster/incremental-snapshot';
export { buildSnapshot } from '../modules/cluster/snapshot';
