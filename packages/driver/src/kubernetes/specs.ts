/**
 * Everything the Kubernetes driver builds or reads, as pure functions: inventory from node
 * labels, node patches (cordon, persona, MIG config, DCM profile), mig-parted and DCM configs, replica pods, Eviction
 * bodies, job status from pods, dcgm-exporter telemetry. The client (kubernetes-driver.ts) only
 * moves these objects over the API.
 */
export * from '../shared/labels';
export * from './quantities';
export * from './node-inventory';
export * from './mig-config';
export * from './dcm-config';
export * from './node-patches';
export * from './pods';
export * from './dcgm-metrics';
