/**
 * How health faults reach Kubernetes, the way NVIDIA NVSentinel's monitors and the node
 * lifecycle controller report them (docs/kube-emulator.md), with the names and the message format
 * the Kubernetes driver accepts (its health-signals.ts, imported here: one list of names): a fatal
 * Xid and a NIC down are node conditions, a non-fatal Xid is a core/v1 Event, a node down is
 * Ready=Unknown with the lifecycle controller's taints. Pure functions.
 */
import { kubernetesHealthSignals } from '@gantry/driver';
import type { CoreV1Event, V1NodeCondition, V1Taint } from '@kubernetes/client-node';
import type { EmulatedGpu, EmulatedNode } from '../cluster/emulated-node';

const { XID_CONDITION_TYPES, NIC_DOWN_CONDITION_TYPES, XID_EVENT_REASONS, NODE_DOWN_TAINT_KEYS, NODE_DOWN_TAINT_EFFECT, xidMessage } = kubernetesHealthSignals;

/** One name the driver accepts (health-signals.ts is the single list), checked at load. */
function accepted(list: readonly string[], name: string): string {
  if (!list.includes(name)) throw new Error(`the driver no longer accepts ${name} (health-signals.ts): update the emulator`);
  return name;
}

/** NVSentinel's syslog-health-monitor check for Xids: a fatal Xid sets this condition on the node. */
export const XID_CONDITION = accepted(XID_CONDITION_TYPES, 'SysLogsXIDError');
/** The reason of the Event a non-fatal (application) Xid is reported with, NVSentinel's check name. */
export const XID_EVENT_REASON = accepted(XID_EVENT_REASONS, 'SysLogsXIDError');
/** NVSentinel's NIC health check of the InfiniBand ports (the GPU fabric). */
export const NIC_CONDITION = accepted(NIC_DOWN_CONDITION_TYPES, 'InfiniBandStateCheck');

export const TAINTS = {
  /** The node lifecycle controller's taints for a node that stopped reporting (NoSchedule, and NoExecute for eviction). */
  unreachable: accepted(NODE_DOWN_TAINT_KEYS, 'node.kubernetes.io/unreachable'),
  /**
   * Put on every new Node by the API server's TaintNodesByCondition admission; the node lifecycle
   * controller (played here) removes it once the node is Ready.
   */
  notReady: accepted(NODE_DOWN_TAINT_KEYS, 'node.kubernetes.io/not-ready'),
} as const;

/** Taint keys an older emulator put on nodes; removed when it syncs a node's taints. */
const RETIRED_TAINT_KEYS = ['nvidia.com/gpu-xid', 'node.kubernetes.io/network-unavailable'];

/** NVIDIA's Xid catalog names for the Xids of docs/reference/gpu.md section 3. */
const XID_NAMES: Record<number, string> = {
  13: 'Graphics Engine Exception',
  31: 'GPU memory page fault',
  43: 'GPU stopped processing',
  45: 'Preemptive cleanup, due to previous errors',
  48: 'Double Bit ECC Error',
  63: 'ECC page retirement or row remapping recording event',
  64: 'ECC page retirement or row remapper recording failure',
  68: 'NVDEC0 Exception',
  74: 'NVLINK Error',
  79: 'GPU has fallen off the bus',
  92: 'High single-bit ECC error rate',
  94: 'Contained ECC error',
  95: 'Uncontained ECC error',
  109: 'Context Switch Timeout Error',
  119: 'GSP RPC Timeout',
  120: 'GSP Error',
};

export const xidName = (xid: number): string => XID_NAMES[xid] ?? 'Unknown Xid';

/** The resolution bucket of NVIDIA's Xid catalog that NVSentinel appends (`Recommended Action=...`). */
export function recommendedAction(xid: number): string {
  if ([13, 31, 43, 45, 68, 109].includes(xid)) return 'NONE';
  if (xid === 79) return 'RESTART_BM';
  if ([48, 63, 64, 74, 92, 94, 95, 119, 120].includes(xid)) return 'RESET_GPU';
  return 'CONTACT_SUPPORT';
}

/**
 * One Xid as NVSentinel's syslog monitor reports it, in the driver's format (`xidMessage`):
 * `ErrorCode:79 GPU:3 PCI:0000:5d:00 GPU_UUID:GPU-... kernel:NVRM: Xid (PCI:0000:5d:00): 79, pid=0, GPU has fallen off the bus. Recommended Action=RESTART_BM;`
 */
export function xidReport(gpu: EmulatedGpu, xid: number): string {
  const pci = pciBusId(gpu.index).slice(4, -2).toLowerCase();
  return xidMessage(xid, gpu.index, `PCI:${pci} GPU_UUID:${gpu.uuid} kernel:${nvrmXidLine(gpu, xid)} Recommended Action=${recommendedAction(xid)};`);
}

/** The GPU's PCI bus id as the kernel prints it (8 GPUs of an HGX board on buses 18, 2a, 3a...). */
export function pciBusId(gpuIndex: number): string {
  const buses = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb];
  const bus = buses[gpuIndex] ?? 0xe0 + gpuIndex;
  return `00000000:${bus.toString(16).padStart(2, '0').toUpperCase()}:00.0`;
}

/** The kernel's NVRM line a syslog monitor parses, e.g. `NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus.` */
export function nvrmXidLine(gpu: EmulatedGpu, xid: number): string {
  const pci = pciBusId(gpu.index).slice(4, -2).toLowerCase();
  return `NVRM: Xid (PCI:${pci}): ${xid}, pid=0, ${xidName(xid)}.`;
}

export function xidCondition(node: EmulatedNode, now: Date): V1NodeCondition {
  const unhealthy = node.gpus.filter((g) => !g.healthy);
  if (unhealthy.length === 0) {
    return {
      type: XID_CONDITION,
      status: 'False',
      reason: `${XID_CONDITION}IsHealthy`,
      message: 'No Health Failures',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    };
  }
  const message = unhealthy.map((g) => xidReport(g, g.lastXid)).join(' ');
  return { type: XID_CONDITION, status: 'True', reason: `${XID_CONDITION}IsNotHealthy`, message, lastHeartbeatTime: now, lastTransitionTime: now };
}

export function nicCondition(node: EmulatedNode, now: Date): V1NodeCondition {
  const base = { type: NIC_CONDITION, lastHeartbeatTime: now, lastTransitionTime: now };
  return node.nicDown
    ? { ...base, status: 'True', reason: `${NIC_CONDITION}IsNotHealthy`, message: 'Port mlx5_0:1 (ib0) state DOWN, physical state Disabled;' }
    : { ...base, status: 'False', reason: `${NIC_CONDITION}IsHealthy`, message: 'No Health Failures' };
}

/**
 * The taints the node's faults call for (the emulator owns only these keys): a node down gets the
 * node lifecycle controller's `unreachable` taints. GPU and NIC faults are conditions only:
 * quarantine (cordon, drain) is Gantry's answer to them, not the monitor's.
 */
export function faultTaints(node: EmulatedNode): V1Taint[] {
  if (!node.down) return [];
  return [
    { key: TAINTS.unreachable, effect: 'NoSchedule' },
    { key: TAINTS.unreachable, effect: NODE_DOWN_TAINT_EFFECT },
  ];
}

/** `current` with the emulator's fault taints replaced by `wanted` (other taints kept). */
export function mergeTaints(current: readonly V1Taint[], wanted: readonly V1Taint[]): V1Taint[] {
  const ours = new Set<string>([...Object.values(TAINTS), ...RETIRED_TAINT_KEYS]);
  return [...current.filter((t) => !ours.has(t.key)), ...wanted.map((t) => ({ ...t }))];
}

export interface NodeEventInput {
  node: EmulatedNode;
  nodeUid?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  component: string;
  now: Date;
}

/** A core/v1 Event about a node, in `default` as the kubelet files node events. */
export function nodeEvent(input: NodeEventInput): CoreV1Event {
  const { node, now } = input;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${node.name}.`, namespace: 'default' },
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: node.name, uid: input.nodeUid ?? node.name },
    reason: input.reason,
    message: input.message,
    type: input.type,
    source: { component: input.component, host: node.name },
    reportingComponent: input.component,
    reportingInstance: node.name,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

/**
 * A non-fatal (application) Xid, as NVSentinel's platform connector posts one: a Warning Event
 * about the node whose reason is the check's name and whose message the driver reads. (A fatal
 * Xid is a node condition instead: xidCondition.)
 */
export function xidEvent(node: EmulatedNode, gpu: EmulatedGpu, xid: number, now: Date, nodeUid?: string): CoreV1Event {
  return nodeEvent({ node, nodeUid, type: 'Warning', reason: XID_EVENT_REASON, component: 'syslog-health-monitor', message: xidReport(gpu, xid), now });
}
