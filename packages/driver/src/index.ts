export * from './types';
export type { Clock } from './clock';
export { DriverEventBus, type DriverEventListener } from './event-bus';
export { createDriver, type DriverConfig } from './create-driver';
export { statusOfMany } from './shared/status-many';
export { stopEach, type StopFailure } from './shared/stop-many';
export { logsOfMany } from './shared/logs-many';

// Simulated cluster
export { SimulatedDriver, DEFAULT_SIMULATED_DELAYS, type SimulatedDelays, type SimulatedDriverOptions } from './simulated/simulated-driver';
export { SimulatedDriverClosedError } from './simulated/sim-timers';
export { SIM_EXIT_CODES } from './simulated/workloads';
// The simulated cluster's telemetry model (what a GPU reports under a load), for replays of simulated time
export { gpuLoads, gpuSamples, type GpuLoad, type SampledNode } from './simulated/telemetry';
export type { GpuClaim } from './simulated/gpu-claims';
export { acceleratorsDemoTopology, demoTopology, generateTopology, type GenerateTopologyOptions } from './simulated/generate-topology';
export {
  parseTopology,
  topologyCounts,
  topologyNodes,
  TopologyError,
  type Topology,
  type TopologySpine,
  type TopologyLeaf,
  type TopologyNode,
  type TopologyGpu,
} from './simulated/topology';
export { loadTopologyFile, formatTopologyJson } from './simulated/topology-file';
export { APPLICATION_XIDS, PROCESS_FATAL_XIDS, xidEffect, type XidEffect } from './shared/xid';

// MIG geometry (derived from the GPU catalog in @gantry/contracts) and the rules every driver enforces
export * from './shared/mig-geometry';
export * from './shared/mig-layout';

// A cluster served by another process (several workers, one simulated cluster)
export { serveDriver, type ClusterHost } from './remote/cluster-host';
export { RemoteDriver, RemoteDriverError, type RemoteDriverOptions } from './remote/remote-driver';

// Kubernetes
export { runPowerHook, powerStateOfLabels, PowerHookError, type PowerHook } from './kubernetes/power-hook';
export {
  KubernetesDriver,
  KUBERNETES_DRIVER_DEFAULTS,
  type KubernetesDriverOptions,
  type MigPartedConfigMapRef,
  type DcmConfigMapRef,
} from './kubernetes/kubernetes-driver';
export * as kubernetesSpecs from './kubernetes/specs';
export * as kubernetesHealthSignals from './kubernetes/health-signals';
export { withConnectionPool, closeConnectionPool } from './kubernetes/connection-pool';
export { kubeJsonRequest, KubeRequestError, MERGE_PATCH, STRATEGIC_MERGE_PATCH, type JsonRequest, type JsonContentType } from './kubernetes/json-request';
export { BARE_METAL_LABELS, BARE_METAL_ANNOTATIONS, type BareMetalHook, type BareMetalHookPayload } from './kubernetes/bare-metal-hook';

// Burn-in (a diagnostic under load before a repaired GPU or node goes back into service)
export * from './shared/burn-in';
