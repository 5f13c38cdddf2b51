/**
 * NVIDIA MIG geometry: which GPU instance profiles exist per GPU model and where they may sit.
 * Pure data (shared/reference/REFERENCE.md section 1, from the NVIDIA MIG user guide).
 * Kept free of logic and imports so it can move to packages/scheduler unchanged.
 *
 * Every MIG-capable GPU here has 7 compute slices and 8 memory slots. A GPU instance occupies
 * the memory slots [start, start + memorySlots); `start` must be one of its class's `starts`.
 * H100/H200 placements are inferred equal to A100's (NVIDIA documents them as diagrams).
 */

export const MIG_COMPUTE_SLICES = 7;
export const MIG_MEMORY_SLOTS = 8;

export type MigClassId = '1g' | '1g+me' | '1g.2mem' | '2g' | '3g' | '4g' | '7g';

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

export const MIG_CLASSES: readonly MigClass[] = [
  { id: '1g', giProfileId: 19, computeSlices: 1, memorySlots: 1, maxPerGpu: 7, starts: [0, 1, 2, 3, 4, 5, 6], mediaExtensions: false },
  { id: '1g+me', giProfileId: 20, computeSlices: 1, memorySlots: 1, maxPerGpu: 1, starts: [0, 1, 2, 3, 4, 5, 6], mediaExtensions: true },
  { id: '1g.2mem', giProfileId: 15, computeSlices: 1, memorySlots: 2, maxPerGpu: 4, starts: [0, 2, 4, 6], mediaExtensions: false },
  { id: '2g', giProfileId: 14, computeSlices: 2, memorySlots: 2, maxPerGpu: 3, starts: [0, 2, 4], mediaExtensions: false },
  { id: '3g', giProfileId: 9, computeSlices: 3, memorySlots: 4, maxPerGpu: 2, starts: [0, 4], mediaExtensions: false },
  { id: '4g', giProfileId: 5, computeSlices: 4, memorySlots: 4, maxPerGpu: 1, starts: [0], mediaExtensions: false },
  { id: '7g', giProfileId: 0, computeSlices: 7, memorySlots: 8, maxPerGpu: 1, starts: [0], mediaExtensions: false },
];

/** Profile names per GPU model and class, as the GPU advertises them. */
export const MIG_PROFILE_NAMES: Readonly<Record<string, Readonly<Record<MigClassId, string>>>> = {
  'A100-40GB': {
    '1g': '1g.5gb', '1g+me': '1g.5gb+me', '1g.2mem': '1g.10gb', '2g': '2g.10gb',
    '3g': '3g.20gb', '4g': '4g.20gb', '7g': '7g.40gb',
  },
  'A100-80GB': {
    '1g': '1g.10gb', '1g+me': '1g.10gb+me', '1g.2mem': '1g.20gb', '2g': '2g.20gb',
    '3g': '3g.40gb', '4g': '4g.40gb', '7g': '7g.80gb',
  },
  'H100-80GB': {
    '1g': '1g.10gb', '1g+me': '1g.10gb+me', '1g.2mem': '1g.20gb', '2g': '2g.20gb',
    '3g': '3g.40gb', '4g': '4g.40gb', '7g': '7g.80gb',
  },
  'H200-141GB': {
    '1g': '1g.18gb', '1g+me': '1g.18gb+me', '1g.2mem': '1g.35gb', '2g': '2g.35gb',
    '3g': '3g.71gb', '4g': '4g.71gb', '7g': '7g.141gb',
  },
};
