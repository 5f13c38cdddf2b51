/**
 * Partition layout rules over the GPU catalog's geometry (@gantry/contracts): NVIDIA MIG
 * (docs/reference/gpu.md section 1) and AMD partition modes (docs/accelerators.md) alike. A
 * partition occupies memory slots [start, start + size) of the model's slots and `compute` of its
 * compute slices; a 'modes' model takes a whole mode (every partition of one profile) or nothing.
 */
import { MIG_GEOMETRY, MIG_MODELS, migProfile, partitionGeometry } from '@gantry/contracts';

// The geometry is the catalog's; the engine's callers read it from here as well.
export { MIG_GEOMETRY, MIG_MODELS, migProfile, migProfilesFor, modelsWithMigProfile } from '@gantry/contracts';
export type { MigClass, MigProfile } from '@gantry/contracts';

export interface MigLayoutEntry {
  profile: string;
  start: number;
}

export type MigRule =
  | 'unknown_model'
  | 'unknown_profile'
  | 'illegal_start'
  | 'overlap'
  | 'compute_exceeded'
  | 'max_per_gpu'
  | 'multiple_me'
  | 'driver_too_old'
  | 'mixed_modes'
  | 'partial_mode';

export type MigLayoutValidation = { ok: true } | { ok: false; rule: MigRule; message: string };

export interface MigValidateOptions {
  /** Driver major version (e.g. 535). Default: recent enough for every rule (>= R525). */
  driverMajor?: number;
  /** Accept a 'modes' layout that does not yet hold every partition of its mode (a plan being built). */
  partialModes?: boolean;
}

/**
 * Checks a MIG layout against NVIDIA's rules: known profile, legal start, no overlap on the 8
 * memory slots, at most 7 compute slices, per-profile maximum, one `+me` at most, driver
 * requirements (4g + 3g needs R510; A100-40GB 1g.10gb needs R525). An empty layout is valid
 * (MIG off). Pure.
 */
export function validateMigLayout(model: string, layout: readonly MigLayoutEntry[], options: MigValidateOptions = {}): MigLayoutValidation {
  const geometry = partitionGeometry(model);
  const profiles = MIG_GEOMETRY[model];
  if (!geometry || !profiles)
    return { ok: false, rule: 'unknown_model', message: `${model} is not a partitionable GPU model (known: ${MIG_MODELS.join(', ')})` };
  const driver = options.driverMajor ?? Number.POSITIVE_INFINITY;
  const slots: (string | null)[] = new Array(geometry.memorySlots).fill(null);
  let compute = 0;
  let me = 0;
  const counts = new Map<string, number>();
  for (const entry of layout) {
    const p = profiles.find((x) => x.name === entry.profile);
    if (!p) {
      return {
        ok: false,
        rule: 'unknown_profile',
        message: `profile ${entry.profile} does not exist on ${model} (profiles: ${profiles.map((x) => x.name).join(', ')})`,
      };
    }
    if (!Number.isInteger(entry.start) || !p.starts.includes(entry.start)) {
      return {
        ok: false,
        rule: 'illegal_start',
        message: `${p.name} cannot start at memory slot ${entry.start} on ${model} (legal starts: ${p.starts.join(', ')})`,
      };
    }
    if (p.minDriver !== undefined && driver < p.minDriver) {
      return { ok: false, rule: 'driver_too_old', message: `${p.name} on ${model} needs driver >= R${p.minDriver}` };
    }
    for (let s = entry.start; s < entry.start + p.size; s++) {
      const holder = slots[s];
      if (holder !== null && holder !== undefined) {
        return { ok: false, rule: 'overlap', message: `${p.name}@${entry.start} overlaps ${holder} on memory slot ${s}` };
      }
      slots[s] = `${p.name}@${entry.start}`;
    }
    compute += p.compute;
    if (p.class === '1g+me') me++;
    const c = (counts.get(p.name) ?? 0) + 1;
    counts.set(p.name, c);
    if (p.class === '1g+me' && me > 1) return { ok: false, rule: 'multiple_me', message: 'at most one +me instance per GPU' };
    if (c > p.maxPerGpu) return { ok: false, rule: 'max_per_gpu', message: `at most ${p.maxPerGpu} x ${p.name} per GPU` };
  }
  if (compute > geometry.computeSlices)
    return { ok: false, rule: 'compute_exceeded', message: `layout uses ${compute} compute slices; a ${model} has ${geometry.computeSlices}` };
  if (geometry.scheme === 'modes' && layout.length > 0) {
    const first = layout[0]!.profile;
    const other = layout.find((e) => e.profile !== first);
    if (other) return { ok: false, rule: 'mixed_modes', message: `a ${model} runs one partition mode at a time (${first} and ${other.profile} asked)` };
    const p = profiles.find((x) => x.name === first)!;
    if (!options.partialModes && layout.length !== p.maxPerGpu) {
      return {
        ok: false,
        rule: 'partial_mode',
        message: `${p.computeMode} splits a ${model} into ${p.maxPerGpu} partitions at once (layout has ${layout.length})`,
      };
    }
  }
  if (me > 1) return { ok: false, rule: 'multiple_me', message: 'at most one +me instance per GPU' };
  if (driver < 510) {
    const classes = layout.map((e) => profiles.find((x) => x.name === e.profile)!.class);
    if (classes.includes('4g') && classes.includes('3g')) {
      return { ok: false, rule: 'driver_too_old', message: '4g + 3g on one GPU needs driver >= R510' };
    }
  }
  return { ok: true };
}

/** A layout in NVIDIA's creation order: largest instances first, then by start. */
export function migCreationOrder(model: string, layout: readonly MigLayoutEntry[]): MigLayoutEntry[] {
  const size = (e: MigLayoutEntry) => migProfile(model, e.profile)?.size ?? 0;
  return [...layout].sort((a, b) => size(b) - size(a) || a.start - b.start);
}

/** Memory-slot bitmask (bit s = slot s) occupied by a layout. */
export function migOccupiedMask(model: string, layout: readonly { profile: string; start: number; size?: number }[]): number {
  let mask = 0;
  for (const e of layout) {
    const size = e.size ?? migProfile(model, e.profile)?.size ?? 0;
    for (let s = e.start; s < e.start + size; s++) mask |= 1 << s;
  }
  return mask;
}

/** Legal starts of a profile whose slots are all free in `occupied` (and keep the other rules). */
export function migFreeStarts(model: string, layout: readonly MigLayoutEntry[], profileName: string): number[] {
  const p = migProfile(model, profileName);
  if (!p) return [];
  return p.starts.filter((start) => validateMigLayout(model, [...layout, { profile: profileName, start }], { partialModes: true }).ok);
}

/** Whether a model is split by whole modes (AMD) rather than instance by instance (MIG). */
export function partitionsByMode(model: string): boolean {
  return partitionGeometry(model)?.scheme === 'modes';
}
