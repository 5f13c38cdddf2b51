export * from './input-error';
export * from './workload';
export * from './cluster';
export * from './policies';
export * from './power';
export { Replay, PlanCancelled } from './replay';
export type { ReplayHooks, ReplayOutcome, Bucket, Integrals } from './replay';
export * from './plan';
export * from './openb-data';
