/**
 * The health signals the Kubernetes driver accepts, as a health source posts them on the API
 * server (NVIDIA NVSentinel's platform connector, a DCGM health check, the node lifecycle
 * controller, the kubelet), and how each one reads. This module is the single list of names:
 * whatever posts signals for Gantry (a real health monitor, or the kube-emulator in tests)
 * imports it. Pure functions; documented in the driver README ("Health signals").
 *
 * Message format of Xid signals (NVSentinel's): `ErrorCode:<xid> GPU:<index> <text>`, e.g.
 * `ErrorCode:79 GPU:3 GPU has fallen off the bus Recommended Action=RESTART_BM;`. The code and
 * the GPU index are read case-insensitively (`gpu:0` too); several `ErrorCode:` may appear.
 */

/** Node condition types (status `True` = the fault is present) that carry an Xid. */
export const XID_CONDITION_TYPES: readonly string[] = ['SysLogsXIDError', 'GpuXidError'];

/** Node condition types (status `True`) that mean Xid 79 (GPU fallen off the bus) without a code. */
export const GPU_FALLEN_OFF_CONDITION_TYPES: readonly string[] = ['SysLogsGPUFallenOff'];

/** Node condition types (status `True`) that mean the node's network (a NIC) is down. */
export const NIC_DOWN_CONDITION_TYPES: readonly string[] = [
  'NetworkUnavailable', // core Kubernetes: the node's network is not configured
  'InfiniBandStateCheck', // NVSentinel NIC health monitor: an InfiniBand/RoCE port is down
  'EthernetStateCheck',
  'EFAStateCheck',
  'SysLogsNICDriverError', // NVSentinel syslog monitor: mlx5 driver/firmware failure
];

/**
 * Taint keys on a node that mean it is down, with effect `NoExecute` (the node lifecycle
 * controller's taint-based eviction). The `NoSchedule` taints of the same keys are the
 * condition-based ones (every new Node gets `not-ready:NoSchedule` until its kubelet reports
 * Ready): they repeat the Ready condition, which is read itself.
 */
export const NODE_DOWN_TAINT_KEYS: readonly string[] = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'];
export const NODE_DOWN_TAINT_EFFECT = 'NoExecute';

/** Taint keys on a node that mean its network is down. */
export const NIC_DOWN_TAINT_KEYS: readonly string[] = ['node.kubernetes.io/network-unavailable'];

/**
 * core/v1 Events about a Node (`involvedObject.kind: Node`, any namespace) whose `reason` (or,
 * as NVSentinel posts non-fatal events, whose `type`) is one of these carry an Xid in their
 * message. Each new event, and each increase of an event's `count`, is one Xid occurrence.
 */
export const XID_EVENT_REASONS: readonly string[] = ['SysLogsXIDError', 'GpuXidError', 'XidError'];

/** The condition every node has; `False` or `Unknown` = the node is down. */
export const READY_CONDITION = 'Ready';

/** Xid reported for a fallen-off-the-bus condition that names no code. */
export const FALLEN_OFF_BUS_XID = 79;

/** The parts of core/v1 objects the signals are read from (plain JSON as the API sends it). */
export interface NodeLike {
  metadata?: { name?: string };
  spec?: { taints?: { key: string; effect?: string; value?: string }[] };
  status?: { conditions?: { type: string; status: string; message?: string; lastTransitionTime?: string | Date }[] };
}

export interface EventLike {
  metadata?: { uid?: string };
  involvedObject?: { kind?: string; name?: string };
  reason?: string;
  type?: string;
  message?: string;
  count?: number;
}

export interface GpuXid {
  gpuIndex: number;
  xid: number;
}

export interface NodeHealth {
  ready: boolean;
  networkUp: boolean;
  /** Xids the node's conditions hold now, one per (GPU, Xid). */
  xids: GpuXid[];
}

/** What a node's conditions and taints say about its health. */
export function nodeHealthOf(node: NodeLike): NodeHealth {
  const conditions = node.status?.conditions ?? [];
  const taints = node.spec?.taints ?? [];
  const isTrue = (types: readonly string[]) => conditions.some((c) => types.includes(c.type) && c.status === 'True');
  const tainted = (keys: readonly string[]) => taints.some((t) => keys.includes(t.key));
  const evicting = taints.some((t) => NODE_DOWN_TAINT_KEYS.includes(t.key) && t.effect === NODE_DOWN_TAINT_EFFECT);
  const ready = conditions.some((c) => c.type === READY_CONDITION && c.status === 'True') && !evicting;
  const networkUp = !isTrue(NIC_DOWN_CONDITION_TYPES) && !tainted(NIC_DOWN_TAINT_KEYS);
  const xids: GpuXid[] = [];
  for (const condition of conditions) {
    if (condition.status !== 'True') continue;
    if (XID_CONDITION_TYPES.includes(condition.type)) xids.push(...parseXidMessage(condition.message ?? ''));
    if (GPU_FALLEN_OFF_CONDITION_TYPES.includes(condition.type)) {
      const parsed = parseXidMessage(condition.message ?? '');
      const gpus = parsed.length ? parsed.map((x) => x.gpuIndex) : gpuIndexesOf(condition.message ?? '');
      xids.push(...gpus.map((gpuIndex) => ({ gpuIndex, xid: FALLEN_OFF_BUS_XID })));
    }
  }
  return { ready, networkUp, xids: uniqueXids(xids) };
}

/** The Xid occurrences an Event about a node carries; empty for any other event. */
export function xidsOfEvent(event: EventLike): GpuXid[] {
  if (event.involvedObject?.kind !== 'Node') return [];
  const named = [event.reason, event.type].some((n) => n !== undefined && XID_EVENT_REASONS.includes(n));
  return named ? parseXidMessage(event.message ?? '') : [];
}

/**
 * `ErrorCode:79 GPU:3 ...` -> [{ gpuIndex: 3, xid: 79 }]. A message may hold several entries,
 * each ended by `;` (NVSentinel joins the entities of one check that way: `ErrorCode:79 GPU:3
 * ... Recommended Action=RESTART_BM; ErrorCode:48 GPU:5 ...;`); within an entry every code is
 * paired with every GPU index it names. An entry that names no GPU index yields nothing (the
 * driver cannot tell which GPU to quarantine).
 */
export function parseXidMessage(message: string): GpuXid[] {
  return uniqueXids(
    message.split(';').flatMap((entry) => {
      const codes = [...entry.matchAll(/\bErrorCode\s*[:=]\s*(\d+)/gi)].map((m) => Number(m[1]));
      const gpus = gpuIndexesOf(entry);
      return codes.flatMap((xid) => gpus.map((gpuIndex) => ({ gpuIndex, xid })));
    }),
  );
}

/** Formats an Xid signal message the way `parseXidMessage` reads it (for health sources and tests). */
export function xidMessage(xid: number, gpuIndex: number, text = 'Xid error'): string {
  return `ErrorCode:${xid} GPU:${gpuIndex} ${text}`;
}

function gpuIndexesOf(message: string): number[] {
  return [...new Set([...message.matchAll(/\bGPU\s*[:=]\s*(\d+)\b/gi)].map((m) => Number(m[1])))];
}

function uniqueXids(xids: GpuXid[]): GpuXid[] {
  const seen = new Map(xids.map((x) => [`${x.gpuIndex}:${x.xid}`, x]));
  return [...seen.values()];
}
