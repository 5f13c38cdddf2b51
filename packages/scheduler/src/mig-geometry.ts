/**
 * NVIDIA MIG geometry (docs/reference/gpu.md section 1): every MIG-capable GPU here has 7 compute slices
 * and 8 memory slots; a GPU instance occupies memory slots [start, start + size).
 */

export type MigClass = '1g' | '1g+me' | '1g.2mem' | '2g' | '3g' | '4g' | '7g';

export interface MigProfile {
  /** Profile name on this GPU model, e.g. '3g.40gb'. */
  name: string;
  /** Class shared across models (the table's row). */
  class: MigClass;
  /** NVIDIA GPU instance profile id. */
  giId: number;
  /** Compute slices out of 7. */
  compute: number;
  /** Memory slots out of 8 (= the size of the placement). */
  size: number;
  /** At most this many instances per GPU. */
  maxPerGpu: number;
  /** Legal placement starts. */
  starts: readonly number[];
  /** Minimum driver major version (R510 for 4g+3g is a layout rule, not a profile one). */
  minDriver?: number;
}

const ROWS: readonly { class: MigClass; giId: number; compute: number; size: number; maxPerGpu: number; starts: number[] }[] = [
  { class: '1g', giId: 19, compute: 1, size: 1, maxPerGpu: 7, starts: [0, 1, 2, 3, 4, 5, 6] },
  { class: '1g+me', giId: 20, compute: 1, size: 1, maxPerGpu: 1, starts: [0, 1, 2, 3, 4, 5, 6] },
  { class: '1g.2mem', giId: 15, compute: 1, size: 2, maxPerGpu: 4, starts: [0, 2, 4, 6] },
  { class: '2g', giId: 14, compute: 2, size: 2, maxPerGpu: 3, starts: [0, 2, 4] },
  { class: '3g', giId: 9, compute: 3, size: 4, maxPerGpu: 2, starts: [0, 4] },
  { class: '4g', giId: 5, compute: 4, size: 4, maxPerGpu: 1, starts: [0] },
  { class: '7g', giId: 0, compute: 7, size: 8, maxPerGpu: 1, starts: [0] },
];

/** Profile names per model, in the table's row order (1g, 1g+me, 1g 2-slot, 2g, 3g, 4g, 7g). */
const NAMES: Record<string, readonly string[]> = {
  'A100-40GB': ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb'],
  'A100-80GB': ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'],
  'H100-80GB': ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'],
  'H200-141GB': ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb'],
};

function buildTable(): Readonly<Record<string, readonly MigProfile[]>> {
  const table: Record<string, MigProfile[]> = {};
  for (const [model, names] of Object.entries(NAMES)) {
    table[model] = ROWS.map((row, i) => {
      const p: MigProfile = { name: names[i]!, ...row, starts: Object.freeze([...row.starts]) };
      // A100-40GB's 2-slot 1g (1g.10gb) needs driver >= R525.
      if (model === 'A100-40GB' && row.class === '1g.2mem') p.minDriver = 525;
      return Object.freeze(p);
    });
  }
  return Object.freeze(table);
}

/** The MIG geometry table: profiles per MIG-capable GPU model (docs/reference/gpu.md section 1). */
export const MIG_GEOMETRY: Readonly<Record<string, readonly MigProfile[]>> = buildTable();

/** MIG-capable GPU models. */
export const MIG_MODELS: readonly string[] = Object.freeze(Object.keys(MIG_GEOMETRY));

/** Profiles of a model (empty when the model is not MIG-capable). */
export function migProfilesFor(model: string): readonly MigProfile[] {
  return MIG_GEOMETRY[model] ?? [];
}

/** One profile of a model by name, or undefined. */
export function migProfile(model: string, name: string): MigProfile | undefined {
  return migProfilesFor(model).find((p) => p.name === name);
}

/** Every model on which a profile name exists. */
export function modelsWithMigProfile(name: string): string[] {
  return MIG_MODELS.filter((m) => migProfile(m, name) !== undefined);
}

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
  | 'driver_too_old';

export type MigLayoutValidation = { ok: true } | { ok: false; rule: MigRule; message: string };

export interface MigValidateOptions {
  /** Driver major version (e.g. 535). Default: recent enough for every rule (>= R525). */
  driverMajor?: number;
}

/**
 * Checks a MIG layout against NVIDIA's rules: known profile, legal start, no overlap on the 8
 * memory slots, at most 7 compute slices, per-profile maximum, one `+me` at most, driver
 * requirements (4g + 3g needs R510; A100-40GB 1g.10gb needs R525). An empty layout is valid
 * (MIG off). Pure.
 */
export function validateMigLayout(model: string, layout: readonly MigLayoutEntry[], options: MigValidateOptions = {}): MigLayoutValidation {
  const profiles = MIG_GEOMETRY[model];
  if (!profiles) return { ok: false, rule: 'unknown_model', message: `${model} is not a MIG-capable GPU model (known: ${MIG_MODELS.join(', ')})` };
  const driver = options.driverMajor ?? Number.POSITIVE_INFINITY;
  const slots: (string | null)[] = new Array(8).fill(null);
  let compute = 0;
  let me = 0;
  const counts = new Map<string, number>();
  for (const entry of layout) {
    const p = profiles.find((x) => x.name === entry.profile);
    if (!p) {
      return { ok: false, rule: 'unknown_profile', message: `profile ${entry.profile} does not exist on ${model} (profiles: ${profiles.map((x) => x.name).join(', ')})` };
    }
    if (!Number.isInteger(entry.start) || !p.starts.includes(entry.start)) {
      return { ok: false, rule: 'illegal_start', message: `${p.name} cannot start at memory slot ${entry.start} on ${model} (legal starts: ${p.starts.join(', ')})` };
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
  if (compute > 7) return { ok: false, rule: 'compute_exceeded', message: `layout uses ${compute} compute slices; a GPU has 7` };
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
  return p.starts.filter((start) => validateMigLayout(model, [...layout, { profile: profileName, start }]).ok);
}
