/**
 * The device plugins' Allocate, per node: a pod gets its extended resources only if the node's
 * allocatable minus what running pods hold covers them (else the kubelet refuses it at
 * admission, as it does on a real node), and it is pinned to GPU indexes: the ones the placement
 * recorded (GANTRY_GPU_INDEXES), else the first GPUs that offer the resource.
 */
import { kubernetesSpecs } from '@gantry/driver';
import type { EmulatedNode } from '../cluster/emulated-node';
import { nodeCapacity } from '../cluster/node-objects';

const { GPU_RESOURCE, SHARED_GPU_RESOURCE } = kubernetesSpecs;

export interface Allocation {
  resources: Record<string, number>;
  gpuIndexes: number[];
}

export type AllocateResult = { ok: true; allocation: Allocation } | { ok: false; reason: string; message: string };

export class DeviceAllocator {
  /** node name -> pod uid -> allocation */
  private readonly held = new Map<string, Map<string, Allocation>>();

  constructor(private readonly sharedReplicasPerGpu: number) {}

  allocate(node: EmulatedNode, podUid: string, requests: Record<string, number>, placed: number[]): AllocateResult {
    const existing = this.held.get(node.name)?.get(podUid);
    if (existing) return { ok: true, allocation: existing };
    const { allocatable } = nodeCapacity(node, { sharedReplicasPerGpu: this.sharedReplicasPerGpu });
    const inUse = this.inUse(node.name);
    for (const [resource, wanted] of Object.entries(requests)) {
      if (wanted <= 0) continue;
      const available = (Number(allocatable[resource]) || 0) - (inUse[resource] ?? 0);
      if (wanted > available) {
        return {
          ok: false,
          reason: 'UnexpectedAdmissionError',
          message: `Allocate failed due to requested number of devices unavailable for ${resource}. Requested: ${wanted}, Available: ${Math.max(0, available)}, which is unexpected`,
        };
      }
    }
    const allocation = { resources: { ...requests }, gpuIndexes: placed.length > 0 ? placed : this.pickGpus(node, requests) };
    this.adopt(node.name, podUid, allocation);
    return { ok: true, allocation };
  }

  /** Records an allocation without checks (a pod already running when the emulator started). */
  adopt(nodeName: string, podUid: string, allocation: Allocation): void {
    const onNode = this.held.get(nodeName) ?? new Map<string, Allocation>();
    onNode.set(podUid, allocation);
    this.held.set(nodeName, onNode);
  }

  release(nodeName: string, podUid: string): void {
    this.held.get(nodeName)?.delete(podUid);
  }

  /** Pods (uids) holding GPU `gpuIndex` of the node. */
  podsOnGpu(nodeName: string, gpuIndex: number): string[] {
    return [...(this.held.get(nodeName) ?? new Map<string, Allocation>())].filter(([, a]) => a.gpuIndexes.includes(gpuIndex)).map(([uid]) => uid);
  }

  allocations(nodeName: string): ReadonlyMap<string, Allocation> {
    return this.held.get(nodeName) ?? new Map();
  }

  private inUse(nodeName: string): Record<string, number> {
    const totals: Record<string, number> = {};
    for (const allocation of this.allocations(nodeName).values()) {
      for (const [resource, amount] of Object.entries(allocation.resources)) totals[resource] = (totals[resource] ?? 0) + amount;
    }
    return totals;
  }

  private pickGpus(node: EmulatedNode, requests: Record<string, number>): number[] {
    const busy = new Set([...this.allocations(node.name).values()].flatMap((a) => a.gpuIndexes));
    const picked: number[] = [];
    for (const [resource, amount] of Object.entries(requests)) {
      const offers = node.gpus.filter((g) => {
        if (!g.healthy) return false;
        if (resource === GPU_RESOURCE) return g.migLayout.length === 0 && !busy.has(g.index);
        if (resource === SHARED_GPU_RESOURCE) return g.migLayout.length === 0;
        return g.migLayout.some((s) => `nvidia.com/mig-${s.profile}` === resource);
      });
      for (const gpu of offers.slice(0, resource === GPU_RESOURCE ? amount : 1)) {
        picked.push(gpu.index);
        busy.add(gpu.index);
      }
    }
    return [...new Set(picked)].sort((a, b) => a - b);
  }
}
