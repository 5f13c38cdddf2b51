/**
 * Per-GPU telemetry consistent with what runs: an idle GPU shows 0 % SM and idle power; a busy
 * one shows high SM %, memory in use and power towards its TDP, in proportion to the part it
 * runs (a whole GPU, a MIG slice's compute share, a fractional share). Deterministic: a small
 * wobble derived from the node, GPU and second replaces randomness.
 */
import type { GpuMetricSample } from '../types';
import type { SimNode } from './cluster-state';
import type { GpuClaim } from './gpu-claims';
import { gpuPower, migSliceFraction } from '@gantry/contracts';
import { MIG_MEMORY_SLOTS } from '../shared/mig-geometry';
import { findMigProfile } from '../shared/mig-layout';

/** Fractions of a GPU in use, each in [0, 1]. */
export interface GpuLoad {
  compute: number;
  memory: number;
}

/** SM occupancy of a fully busy GPU before the wobble, and the share of its memory a job fills. */
const BUSY_SM_PCT = 90;
const BUSY_MEMORY_FILL = 0.85;

export const gpuLoadKey = (nodeName: string, gpuIndex: number): string => `${nodeName}/${gpuIndex}`;

export function gpuLoads(claims: readonly GpuClaim[], modelOf: (claim: GpuClaim) => string): Map<string, GpuLoad> {
  const loads = new Map<string, GpuLoad>();
  for (const claim of claims) {
    const key = gpuLoadKey(claim.nodeName, claim.gpuIndex);
    const load = loads.get(key) ?? { compute: 0, memory: 0 };
    const part = claimedPart(claim, modelOf(claim));
    loads.set(key, { compute: Math.min(1, load.compute + part.compute), memory: Math.min(1, load.memory + part.memory) });
  }
  return loads;
}

/** What the samples read of a node: its name, whether it is down, its GPUs. */
export type SampledNode = Pick<SimNode, 'name' | 'down'> & { gpus: readonly Pick<SimNode['gpus'][number], 'index' | 'model' | 'memoryMiB'>[] };

export function gpuSamples(nodes: readonly SampledNode[], loads: ReadonlyMap<string, GpuLoad>, at: number): GpuMetricSample[] {
  return nodes
    .filter((node) => !node.down)
    .flatMap((node) =>
      node.gpus.map((gpu) => {
        const load = loads.get(gpuLoadKey(node.name, gpu.index)) ?? { compute: 0, memory: 0 };
        const { idleW, busyW } = gpuPower(gpu.model);
        const smPct = load.compute === 0 ? 0 : Math.min(100, load.compute * (BUSY_SM_PCT + wobble(node.name, gpu.index, at)));
        return {
          nodeName: node.name,
          gpuIndex: gpu.index,
          at,
          smPct: round1(smPct),
          memoryUsedMiB: Math.round(load.memory * BUSY_MEMORY_FILL * gpu.memoryMiB),
          powerW: round1(idleW + ((busyW - idleW) * smPct) / 100),
        };
      }),
    );
}

function claimedPart(claim: GpuClaim, model: string): GpuLoad {
  switch (claim.kind) {
    case 'whole':
      return { compute: 1, memory: 1 };
    case 'share':
      return { compute: claim.milli / 1000, memory: claim.milli / 1000 };
    case 'mig': {
      const profile = findMigProfile(model, claim.profile);
      if (!profile) return { compute: 0, memory: 0 };
      return { compute: migSliceFraction(profile.name, model)!, memory: profile.memorySlots / MIG_MEMORY_SLOTS };
    }
  }
}

/** 0..8 percentage points, stable within a second for a given GPU. */
function wobble(nodeName: string, gpuIndex: number, at: number): number {
  let hash = gpuIndex * 31 + Math.floor(at / 1000);
  for (let i = 0; i < nodeName.length; i++) hash = (hash * 33 + nodeName.charCodeAt(i)) >>> 0;
  return hash % 9;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
