/**
 * NVIDIA MIG geometry as the drivers see it: the classes (rows) and the profile names per GPU
 * model, derived from the GPU catalog in @gantry/contracts (docs/reference/gpu.md section 1), so
 * the simulated GPUs, the Kubernetes driver and the placement engine can never disagree on a
 * profile, size or legal start.
 *
 * Every MIG-capable GPU here has 7 compute slices and 8 memory slots. A GPU instance occupies
 * the memory slots [start, start + memorySlots); `start` must be one of its class's `starts`.
 */
import { MIG_CLASS_GEOMETRY, MIG_GEOMETRY, type MigClass as CatalogMigClass } from '@gantry/contracts';

export { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS } from '@gantry/contracts';

export type MigClassId = CatalogMigClass;

export interface MigClass {
  id: MigClassId;
  /** GPU instance profile id as `nvidia-smi mig -lgip` prints it. */
  giProfileId: number;
  computeSlices: number;
  memorySlots: number;
  maxPerGpu: number;
  /** Legal start memory slots. */
  starts: readonly number[];
  /** Owns the GPU's media engines (`+me`); at most one per GPU. */
  mediaExtensions: boolean;
}

/** The classes are the same on every model; only the names differ. */
export const MIG_CLASSES: readonly MigClass[] = Object.freeze(
  MIG_CLASS_GEOMETRY.map((c) =>
    Object.freeze({
      id: c.class,
      giProfileId: c.giId,
      computeSlices: c.compute,
      memorySlots: c.size,
      maxPerGpu: c.maxPerGpu,
      starts: c.starts,
      mediaExtensions: c.class === '1g+me',
    }),
  ),
);

/** Profile names per GPU model and class, as the GPU advertises them. */
export const MIG_PROFILE_NAMES: Readonly<Record<string, Readonly<Record<MigClassId, string>>>> = Object.freeze(
  Object.fromEntries(
    Object.entries(MIG_GEOMETRY).map(([model, profiles]) => [
      model,
      Object.freeze(Object.fromEntries(profiles.map((p) => [p.class, p.name])) as Record<MigClassId, string>),
    ]),
  ),
);
