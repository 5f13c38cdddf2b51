/**
 * Node objects as a kubelet, GPU feature discovery, the NVIDIA device plugin and Topograph would
 * leave them: labels (docs/reference/gpu.md section 2), capacity and allocatable, conditions,
 * and the node's Lease. Pure functions.
 */
import { gpuModelSpec, partitionModeOf } from '@gantry/contracts';
import { isMigCapable, kubernetesSpecs, type MigSliceSpec } from '@gantry/driver';
import type { V1Lease, V1Node, V1NodeCondition } from '@kubernetes/client-node';
import type { EmulatedNode } from './emulated-node';
import { gpuProductNames } from './gpu-products';

const {
  GPU_LABELS,
  AMD_GPU_LABELS,
  TOPOLOGY_LABELS,
  GANTRY_LABELS,
  GANTRY_ANNOTATIONS,
  GPU_RESOURCE,
  AMD_GPU_RESOURCE,
  SHARED_GPU_RESOURCE,
  amdPartitionResource,
  migResource,
  migConfigName,
  normalizeMigLayouts,
} = kubernetesSpecs;

const isAmd = (model: string) => gpuModelSpec(model)?.vendor === 'amd';

/** The AMD node labeller's partition label value of a GPU ('spx_nps1' for a whole GPU). */
function amdModeOf(model: string, layout: readonly MigSliceSpec[]): string {
  const mode = partitionModeOf(model, layout);
  return mode ? `${mode.computeMode}_${mode.memoryMode}`.toLowerCase() : 'spx_nps1';
}

/**
 * What the AMD GPU Operator's node labeller and Device Config Manager leave on a node: product,
 * VRAM, CUs, partitioning support, the partition mode when every GPU has the same one, and the
 * DCM profile state.
 */
export function amdLabels(node: EmulatedNode): Record<string, string> {
  const first = node.gpus[0]!;
  const modes = new Set(node.gpus.map((g) => amdModeOf(g.model, g.migLayout)));
  const labels: Record<string, string> = {
    [AMD_GPU_LABELS.productName]: gpuProductNames(first.model).product,
    [AMD_GPU_LABELS.vram]: `${gpuModelSpec(first.model)?.memoryGB ?? Math.round(first.memoryMiB / 1024)}G`,
    [AMD_GPU_LABELS.family]: 'AI',
    [AMD_GPU_LABELS.computePartitioningSupported]: String(isMigCapable(first.model)),
    [AMD_GPU_LABELS.memoryPartitioningSupported]: String(isMigCapable(first.model)),
    'feature.node.kubernetes.io/amd-gpu': 'true',
  };
  if (modes.size === 1) labels[AMD_GPU_LABELS.computeMemoryPartition] = [...modes][0]!;
  return labels;
}

/** Marks the nodes this emulator plays (the way KWOK marks its fake nodes). */
export const EMULATED_NODE_LABEL = 'kube-emulator.gantry.io/node';
export const EMULATED_NODES_SELECTOR = `${EMULATED_NODE_LABEL}=true`;
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const KUBELET_VERSION = 'v1.20.2-gantry-kube-emulator';

export interface NodeObjectOptions {
  /** Time-slicing replicas per whole GPU advertised as `nvidia.com/gpu.shared`. */
  sharedReplicasPerGpu: number;
  leaseDurationSeconds: number;
}

/** The node's MIG layouts by GPU index, as the driver's `gantry.io/mig-layouts` annotation holds them. */
export function migLayoutsOf(node: EmulatedNode): Record<number, MigSliceSpec[]> {
  return Object.fromEntries(node.gpus.map((g) => [g.index, g.migLayout]));
}

export function workloadConfigOf(node: EmulatedNode): 'container' | 'vm-passthrough' {
  return node.persona === 'vm-passthrough' ? 'vm-passthrough' : 'container';
}

export function nodeLabels(node: EmulatedNode): Record<string, string> {
  const labels: Record<string, string> = {
    ...node.labels,
    'kubernetes.io/hostname': node.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    [TOPOLOGY_LABELS.leaf]: node.leaf,
    [TOPOLOGY_LABELS.spine]: node.spine,
    [EMULATED_NODE_LABEL]: 'true',
  };
  const first = node.gpus[0];
  if (!first) return labels;
  if (isAmd(first.model)) return { ...labels, ...amdLabels(node), ...(node.persona === 'inference' ? { [GANTRY_LABELS.persona]: 'inference' } : {}) };
  const migCapable = isMigCapable(first.model);
  Object.assign(labels, {
    'nvidia.com/gpu.present': 'true',
    [GPU_LABELS.product]: gpuProductNames(first.model).product,
    [GPU_LABELS.count]: String(node.gpus.length),
    [GPU_LABELS.memoryMiB]: String(first.memoryMiB),
    [GPU_LABELS.migCapable]: String(migCapable),
    [GPU_LABELS.workloadConfig]: workloadConfigOf(node),
  });
  if (node.persona === 'inference') labels[GANTRY_LABELS.persona] = 'inference';
  if (migCapable) {
    labels['nvidia.com/mig.strategy'] = 'mixed';
    labels[GPU_LABELS.migConfig] = node.appliedMigConfig || migConfigName(migLayoutsOf(node));
    labels[GPU_LABELS.migConfigState] = 'success';
  }
  return labels;
}

export function nodeAnnotations(node: EmulatedNode): Record<string, string> {
  const annotations: Record<string, string> = { 'node.alpha.kubernetes.io/ttl': '0' };
  const layouts = normalizeMigLayouts(migLayoutsOf(node));
  if (Object.keys(layouts).length > 0) annotations[GANTRY_ANNOTATIONS.migLayouts] = JSON.stringify(layouts);
  return annotations;
}

/**
 * The device plugins' resources: `nvidia.com/gpu` for whole GPUs, `nvidia.com/mig-<profile>` per
 * MIG slice (strategy mixed), `nvidia.com/gpu.shared` time-sliced replicas of the whole GPUs, or
 * the passthrough device in the vm-passthrough persona; AMD GPUs: `amd.com/gpu` whole,
 * `amd.com/<compute>_<memory>` per partition (strategy mixed). Allocatable leaves out unhealthy GPUs.
 * A resource the node advertised before and no longer has stays at "0", as the kubelet keeps it.
 */
export function gpuResources(
  node: EmulatedNode,
  options: Pick<NodeObjectOptions, 'sharedReplicasPerGpu'>,
  previously: Iterable<string> = [],
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity: Record<string, number> = {};
  const allocatable: Record<string, number> = {};
  const add = (resource: string, amount: number, healthy: boolean) => {
    capacity[resource] = (capacity[resource] ?? 0) + amount;
    allocatable[resource] = (allocatable[resource] ?? 0) + (healthy ? amount : 0);
  };
  for (const resource of previously) {
    capacity[resource] = 0;
    allocatable[resource] = 0;
  }
  for (const gpu of node.switchingPersona ? [] : node.gpus) {
    if (node.persona === 'vm-passthrough') {
      add(gpuProductNames(gpu.model).passthroughResource, 1, gpu.healthy);
    } else if (isAmd(gpu.model)) {
      // the AMD device plugin, strategy mixed: amd.com/gpu per whole (SPX) GPU, amd.com/<mode> per partition
      if (gpu.migLayout.length > 0) for (const slice of gpu.migLayout) add(amdPartitionResource(slice.profile), 1, gpu.healthy);
      else add(AMD_GPU_RESOURCE, 1, gpu.healthy);
    } else if (gpu.migLayout.length > 0) {
      for (const slice of gpu.migLayout) add(migResource(slice.profile), 1, gpu.healthy);
    } else {
      add(GPU_RESOURCE, 1, gpu.healthy);
      if (options.sharedReplicasPerGpu > 0) add(SHARED_GPU_RESOURCE, options.sharedReplicasPerGpu, gpu.healthy);
    }
  }
  const text = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]));
  return { capacity: text(capacity), allocatable: text(allocatable) };
}

export function nodeCapacity(
  node: EmulatedNode,
  options: Pick<NodeObjectOptions, 'sharedReplicasPerGpu'>,
  previously: Iterable<string> = [],
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const gpu = gpuResources(node, options, previously);
  const base = { cpu: `${node.cpuMilli}m`, memory: `${node.memoryMiB}Mi`, pods: '110', 'ephemeral-storage': '1Ti' };
  return { capacity: { ...base, ...gpu.capacity }, allocatable: { ...base, ...gpu.allocatable } };
}

export function readyCondition(node: EmulatedNode, now: Date): V1NodeCondition {
  if (node.down) {
    return {
      type: 'Ready',
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: now,
      lastTransitionTime: now,
    };
  }
  return { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now };
}

/** A Node for POST /api/v1/nodes: Kubernetes takes status on create for nodes (as kubelets register). */
export function nodeObject(node: EmulatedNode, options: NodeObjectOptions, now: Date): V1Node {
  const { capacity, allocatable } = nodeCapacity(node, options);
  const pressure = (type: string, reason: string): V1NodeCondition => ({
    type,
    status: 'False',
    reason,
    message: `kubelet has no ${type.replace('Pressure', '').toLowerCase()} pressure`,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node.name, labels: nodeLabels(node), annotations: nodeAnnotations(node) },
    spec: {},
    status: {
      capacity,
      allocatable,
      conditions: [
        pressure('MemoryPressure', 'KubeletHasSufficientMemory'),
        pressure('DiskPressure', 'KubeletHasNoDiskPressure'),
        pressure('PIDPressure', 'KubeletHasSufficientPID'),
        readyCondition(node, now),
      ],
      addresses: [
        { type: 'InternalIP', address: internalIp(node.name) },
        { type: 'Hostname', address: node.name },
      ],
      nodeInfo: {
        architecture: 'amd64',
        bootID: '',
        containerRuntimeVersion: 'containerd://1.7.0',
        kernelVersion: '5.15.0-gantry',
        kubeProxyVersion: KUBELET_VERSION,
        kubeletVersion: KUBELET_VERSION,
        machineID: '',
        operatingSystem: 'linux',
        osImage: 'Gantry kube-emulator',
        systemUUID: '',
      },
    },
  };
}

/** The kubelet's Lease in kube-node-lease (renewTime is a MicroTime: six fractional digits). */
export function nodeLease(nodeName: string, nodeUid: string | undefined, options: Pick<NodeObjectOptions, 'leaseDurationSeconds'>, now: Date): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: nodeName,
      namespace: NODE_LEASE_NAMESPACE,
      ...(nodeUid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid }] } : {}),
    },
    spec: { holderIdentity: nodeName, leaseDurationSeconds: options.leaseDurationSeconds, renewTime: microTime(now) as unknown as Date },
  };
}

/** RFC 3339 with microseconds, the only form the API server takes for a MicroTime. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A stable address in 10.0.0.0/8 for the node (hash of its name). */
export function internalIp(nodeName: string): string {
  let h = 2166136261;
  for (let i = 0; i < nodeName.length; i++) h = Math.imul(h ^ nodeName.charCodeAt(i), 16777619) >>> 0;
  return `10.${(h >>> 16) & 255}.${(h >>> 8) & 255}.${h & 255 || 1}`;
}
