/**
 * Partition geometry as the drivers see it, derived from the GPU catalog in @gantry/contracts
 * (NVIDIA MIG: docs/reference/gpu.md section 1; AMD partition modes: docs/accelerators.md), so the
 * simulated GPUs, the Kubernetes driver and the placement engine can never disagree on a
 * profile, size or legal start.
 *
 * A partition occupies the memory slots [start, start + memorySlots) of its model's slots;
 * `start` must be one of its profile's `starts`. A model partitioned by 'modes' (MI300X) holds
 * every partition of one profile or none.
 */
import {
  MIG_GEOMETRY,
  PARTITION_GEOMETRY,
  type MigClass as CatalogMigClass,
  type MigProfile as CatalogProfile,
  type PartitionGeometry,
} from '@gantry/contracts';

export { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS } from '@gantry/contracts';

/** NVIDIA's class (a MIG table row) or an AMD compute mode in lower case ('cpx'). */
export type MigClassId = CatalogMigClass | (string & {});

export interface MigClass {
  id: MigClassId;
  /** NVIDIA: GPU instance profile id as `nvidia-smi mig -lgip` prints it; AMD: amd-smi partition profile index. */
  giProfileId: number;
  computeSlices: number;
  memorySlots: number;
  maxPerGpu: number;
  /** Legal start memory slots. */
  starts: readonly number[];
  /** Owns the GPU's media engines (`+me`); at most one per GPU. */
  mediaExtensions: boolean;
}

/** A catalog profile in the drivers' terms. */
export function driverClassOf(p: CatalogProfile): MigClass {
  return {
    id: p.class,
    giProfileId: p.giId,
    computeSlices: p.compute,
    memorySlots: p.size,
    maxPerGpu: p.maxPerGpu,
    starts: p.starts,
    mediaExtensions: p.class === '1g+me',
  };
}

/** Profile names per GPU model and class, as the GPU advertises them (a class has one name per model). */
export const MIG_PROFILE_NAMES: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.freeze(
  Object.fromEntries(
    Object.entries(MIG_GEOMETRY).map(([model, profiles]) => [
      model,
      // first profile of each class (an MI300X's 'cpx' is cpx_nps1 here; cpx_nps4 is its other memory mode)
      Object.freeze(Object.fromEntries([...profiles].reverse().map((p) => [p.class, p.name]))),
    ]),
  ),
);

/** A model's geometry (slots, compute slices, scheme), or undefined when it does not partition. */
export function geometryOf(model: string): Readonly<PartitionGeometry> | undefined {
  return Object.prototype.hasOwnProperty.call(PARTITION_GEOMETRY, model) ? PARTITION_GEOMETRY[model] : undefined;
}
