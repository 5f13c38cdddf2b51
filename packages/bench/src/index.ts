export { runOpenb, runOnce, loadNodes, loadPods, toNodeState, toPendingJob, traceShapes, workload } from './openb';
export type { OpenbNode, OpenbPod, OpenbSummary, Policy, RunResult } from './openb';
export { runThroughput, syntheticCluster, syntheticJobs } from './throughput';
export { Rng } from './rng';
export { parseSeeds } from './seeds';
export { makeVariant, parseVariant, podKind, specTable, variantCsv } from './openb-variants';
export type { PodKind, SpecTable, VariantSpec } from './openb-variants';
export { gridTable, runGrid } from './openb-grid';
export type { GridCell, GridOptions } from './openb-grid';
