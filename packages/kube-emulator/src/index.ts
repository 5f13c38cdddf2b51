export { startEmulator, DEFAULT_EMULATOR_DELAYS, type Emulator, type EmulatorOptions, type EmulatorDelays } from './emulator';
export type { EmulatedNode, EmulatedGpu } from './cluster/emulated-node';
export { EMULATED_NODE_LABEL, EMULATED_NODES_SELECTOR } from './cluster/node-objects';
export { UNHEALTHY_GPUS_ANNOTATION } from './cluster/adopt-node';
export { XID_CONDITION, XID_EVENT_REASON, NIC_CONDITION, TAINTS as FAULT_TAINTS } from './health/fault-reports';
export { EXIT_CODES } from './kubelet/kubelet';
