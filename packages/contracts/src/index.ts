// First: settings zod reads while the schemas below are built.
import './zod-setup';

export * from './common';
export * from './gpu-catalog';
export * from './gpu-power';
export * from './events';
export * from './tenancy';
export * from './cluster';
export * from './jobs';
export * from './api-keys';
export * from './utilization';
export * from './node-manager';
export * from './quotas';
export * from './users';
export * from './audit';
export * from './endpoints';
export * from './schedules';
export * from './planner';
export * from './fairness';
export * from './bare-metal';
export * from './reservations';
