/**
 * How health faults reach Kubernetes, the way NVIDIA NVSentinel's monitors and the node
 * lifecycle controller report them (docs/kube-emulator.md): node conditions say why a node is
 * bad, taints say that it is, core/v1 Events record each occurrence. Pure functions.
 */
import type { CoreV1Event, V1NodeCondition, V1Taint } from '@kubernetes/client-node';
import type { EmulatedGpu, EmulatedNode } from '../cluster/emulated-node';

/** NVSentinel's syslog-health-monitor check for Xids. */
export const XID_CONDITION = 'SysLogsXIDError';
export const NIC_CONDITION = 'NetworkUnavailable';

export const TAINTS = {
  /** A critical Xid left a GPU unhealthy (value: the Xid). */
  gpuXid: 'nvidia.com/gpu-xid',
  networkUnavailable: 'node.kubernetes.io/network-unavailable',
  unreachable: 'node.kubernetes.io/unreachable',
  /**
   * Put on every new Node by the API server's TaintNodesByCondition admission; the node lifecycle
   * controller (played here) removes it once the node is Ready.
   */
  notReady: 'node.kubernetes.io/not-ready',
} as const;

/** Gantry-readable copies of what the Event's message says, on the Event's annotations. */
export const EVENT_ANNOTATIONS = { xid: 'gantry.io/xid', gpuIndex: 'gantry.io/gpu-index', gpuUuid: 'gantry.io/gpu-uuid' } as const;

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
  const message = unhealthy.map((g) => `ErrorCode:${g.lastXid} GPU:${g.index} UUID:${g.uuid} PCI:${pciBusId(g.index)} ${nvrmXidLine(g, g.lastXid)}`).join('; ');
  return { type: XID_CONDITION, status: 'True', reason: `${XID_CONDITION}IsNotHealthy`, message, lastHeartbeatTime: now, lastTransitionTime: now };
}

export function nicCondition(node: EmulatedNode, now: Date): V1NodeCondition {
  return node.nicDown
    ? { type: NIC_CONDITION, status: 'True', reason: 'NicLinkDown', message: 'NIC mlx5_0 (ib0) link is down', lastHeartbeatTime: now, lastTransitionTime: now }
    : { type: NIC_CONDITION, status: 'False', reason: 'NicLinkUp', message: 'NIC links are up', lastHeartbeatTime: now, lastTransitionTime: now };
}

/** The taints the node's faults call for (the emulator owns only these keys). */
export function faultTaints(node: EmulatedNode): V1Taint[] {
  const taints: V1Taint[] = [];
  const unhealthy = node.gpus.filter((g) => !g.healthy);
  if (unhealthy.length > 0) taints.push({ key: TAINTS.gpuXid, value: String(unhealthy[unhealthy.length - 1].lastXid), effect: 'NoSchedule' });
  if (node.nicDown) taints.push({ key: TAINTS.networkUnavailable, effect: 'NoSchedule' });
  if (node.down) taints.push({ key: TAINTS.unreachable, effect: 'NoSchedule' }, { key: TAINTS.unreachable, effect: 'NoExecute' });
  return taints;
}

/** `current` with the emulator's fault taints replaced by `wanted` (other taints kept). */
export function mergeTaints(current: readonly V1Taint[], wanted: readonly V1Taint[]): V1Taint[] {
  const ours = new Set<string>(Object.values(TAINTS));
  return [...current.filter((t) => !ours.has(t.key)), ...wanted.map((t) => ({ ...t }))];
}

export interface NodeEventInput {
  node: EmulatedNode;
  nodeUid?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  component: string;
  annotations?: Record<string, string>;
  now: Date;
}

/** A core/v1 Event about a node, in `default` as the kubelet files node events. */
export function nodeEvent(input: NodeEventInput): CoreV1Event {
  const { node, now } = input;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${node.name}.`, namespace: 'default', annotations: input.annotations },
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

export function xidEvent(node: EmulatedNode, gpu: EmulatedGpu, xid: number, critical: boolean, now: Date, nodeUid?: string): CoreV1Event {
  return nodeEvent({
    node,
    nodeUid,
    type: 'Warning',
    reason: XID_CONDITION,
    component: 'syslog-health-monitor',
    message: `Xid ${xid} on GPU ${gpu.index} (UUID ${gpu.uuid}, PCI ${pciBusId(gpu.index)}): ${xidName(xid)}${critical ? '' : ' (application error: the GPU stays healthy)'}. ${nvrmXidLine(gpu, xid)}`,
    annotations: { [EVENT_ANNOTATIONS.xid]: String(xid), [EVENT_ANNOTATIONS.gpuIndex]: String(gpu.index), [EVENT_ANNOTATIONS.gpuUuid]: gpu.uuid },
    now,
  });
}
