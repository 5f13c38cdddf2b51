export { runOpenb, runOnce, loadNodes, loadPods, toNodeState, toPendingJob, traceShapes, workload } from './openb';
export type { OpenbNode, OpenbPod, OpenbSummary, Policy, RunResult } from './openb';
export { runThroughput, syntheticCluster, syntheticJobs } from './throughput';
export { Rng } from './rng';
export { parseSeeds } from './seeds';
