/**
 * The GPU catalog: what Gantry knows of the GPU models it runs (memory, NVLink, MIG, power,
 * default price), NVIDIA's MIG geometry (docs/reference/gpu.md section 1) and the node personas.
 * The one copy of these facts: the engine, the drivers, the API and the console all read it.
 * Data and lookups only; the rules over them (layout validation, MIG planning) live in the engine
 * and the drivers.
 */

// ---------------------------------------------------------------------------------------------
// GPU models

/** Gantry's GPU model names, in the catalog's order. */
export const GPU_MODELS = ['H100-80GB', 'H200-141GB', 'A100-80GB', 'A100-40GB'] as const;
export type GpuModelName = (typeof GPU_MODELS)[number];

export interface GpuModelSpec {
  /** Gantry's model name, e.g. 'H100-80GB'. */
  model: GpuModelName;
  /** Memory in the model's name, GB. */
  memoryGB: number;
  /** Framebuffer size as NVML reports it, MiB. */
  memoryMiB: number;
  /** NVLink: on HGX boards (the SXM parts here) NVSwitch joins every GPU of a node. */
  nvlink: boolean;
  /** Can be partitioned with MIG (it has a MIG geometry below). */
  migCapable: boolean;
  /** Power draw when idle, W. */
  idleW: number;
  /** Power draw at full load (the SXM part's TDP), W. */
  busyW: number;
  /** Default price of a GPU-hour (the API's GANTRY_GPU_PRICES overrides it). */
  pricePerGpuHour: number;
}

/** Power and price assumed for a model the catalog does not know. */
export const UNKNOWN_GPU_MODEL: Readonly<Pick<GpuModelSpec, 'idleW' | 'busyW' | 'pricePerGpuHour'>> = Object.freeze({
  idleW: 50,
  busyW: 300,
  pricePerGpuHour: 1.0,
});

/** The GPU models, by name, in the order of GPU_MODELS. */
export const GPU_MODEL_SPECS: Readonly<Record<string, Readonly<GpuModelSpec>>> = Object.freeze({
  'H100-80GB': Object.freeze({
    model: 'H100-80GB',
    memoryGB: 80,
    memoryMiB: 81559,
    nvlink: true,
    migCapable: true,
    idleW: 70,
    busyW: 700,
    pricePerGpuHour: 2.49,
  }),
  'H200-141GB': Object.freeze({
    model: 'H200-141GB',
    memoryGB: 141,
    memoryMiB: 143771,
    nvlink: true,
    migCapable: true,
    idleW: 75,
    busyW: 700,
    pricePerGpuHour: 3.49,
  }),
  'A100-80GB': Object.freeze({
    model: 'A100-80GB',
    memoryGB: 80,
    memoryMiB: 81920,
    nvlink: true,
    migCapable: true,
    idleW: 55,
    busyW: 400,
    pricePerGpuHour: 1.79,
  }),
  'A100-40GB': Object.freeze({
    model: 'A100-40GB',
    memoryGB: 40,
    memoryMiB: 40960,
    nvlink: true,
    migCapable: true,
    idleW: 50,
    busyW: 400,
    pricePerGpuHour: 1.29,
  }),
} satisfies Record<GpuModelName, GpuModelSpec>);

/** A model's spec, or undefined when the catalog does not know it. */
export function gpuModelSpec(model: string): Readonly<GpuModelSpec> | undefined {
  return Object.prototype.hasOwnProperty.call(GPU_MODEL_SPECS, model) ? GPU_MODEL_SPECS[model] : undefined;
}

/** Idle and full-load power of a model (UNKNOWN_GPU_MODEL's for a model the catalog does not know). */
export function gpuPower(model: string): { idleW: number; busyW: number } {
  const { idleW, busyW } = gpuModelSpec(model) ?? UNKNOWN_GPU_MODEL;
  return { idleW, busyW };
}

// ---------------------------------------------------------------------------------------------
// MIG geometry (docs/reference/gpu.md section 1)

/** Every MIG-capable GPU here has 7 compute (SM) slices... */
export const MIG_COMPUTE_SLICES = 7;
/** ...and 8 memory slots; a GPU instance occupies memory slots [start, start + size). */
export const MIG_MEMORY_SLOTS = 8;

/** A row of the table: the same on every MIG-capable model, only the profile names differ. */
export type MigClass = '1g' | '1g+me' | '1g.2mem' | '2g' | '3g' | '4g' | '7g';

export interface MigClassGeometry {
  /** Class shared across models (the table's row). */
  class: MigClass;
  /** NVIDIA GPU instance profile id (`nvidia-smi mig -lgip`). */
  giId: number;
  /** Compute slices out of 7. */
  compute: number;
  /** Memory slots out of 8 (= the size of the placement). */
  size: number;
  /** At most this many instances per GPU. */
  maxPerGpu: number;
  /** Legal placement starts (memory slots). */
  starts: readonly number[];
}

export interface MigProfile extends MigClassGeometry {
  /** Profile name on this GPU model, e.g. '3g.40gb'. */
  name: string;
  /** Memory of the instance, GB (as its name says). */
  memoryGB: number;
  /** Minimum driver major version (R510 for 4g+3g is a layout rule, not a profile one). */
  minDriver?: number;
}

/** The table's rows (classes), in NVIDIA's order. */
export const MIG_CLASS_GEOMETRY: readonly Readonly<MigClassGeometry>[] = Object.freeze(
  (
    [
      { class: '1g', giId: 19, compute: 1, size: 1, maxPerGpu: 7, starts: [0, 1, 2, 3, 4, 5, 6] },
      { class: '1g+me', giId: 20, compute: 1, size: 1, maxPerGpu: 1, starts: [0, 1, 2, 3, 4, 5, 6] },
      { class: '1g.2mem', giId: 15, compute: 1, size: 2, maxPerGpu: 4, starts: [0, 2, 4, 6] },
      { class: '2g', giId: 14, compute: 2, size: 2, maxPerGpu: 3, starts: [0, 2, 4] },
      { class: '3g', giId: 9, compute: 3, size: 4, maxPerGpu: 2, starts: [0, 4] },
      { class: '4g', giId: 5, compute: 4, size: 4, maxPerGpu: 1, starts: [0] },
      { class: '7g', giId: 0, compute: 7, size: 8, maxPerGpu: 1, starts: [0] },
    ] satisfies MigClassGeometry[]
  ).map((row) => Object.freeze({ ...row, starts: Object.freeze([...row.starts]) })),
);

/** Profile names per MIG-capable model, in the rows' order (1g, 1g+me, 1g 2-slot, 2g, 3g, 4g, 7g). */
const MIG_NAMES: Record<string, readonly string[]> = {
  'A100-40GB': ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb'],
  'A100-80GB': ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'],
  'H100-80GB': ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'],
  'H200-141GB': ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb'],
};

function buildGeometry(): Readonly<Record<string, readonly MigProfile[]>> {
  const table: Record<string, readonly MigProfile[]> = {};
  for (const [model, names] of Object.entries(MIG_NAMES)) {
    table[model] = Object.freeze(
      MIG_CLASS_GEOMETRY.map((row, i) => {
        const name = names[i]!;
        const p: MigProfile = { name, ...row, memoryGB: Number(/\.(\d+)gb/.exec(name)![1]) };
        // A100-40GB's 2-slot 1g (1g.10gb) needs driver >= R525.
        if (model === 'A100-40GB' && row.class === '1g.2mem') p.minDriver = 525;
        return Object.freeze(p);
      }),
    );
  }
  return Object.freeze(table);
}

/** The MIG geometry table: profiles per MIG-capable GPU model (docs/reference/gpu.md section 1). */
export const MIG_GEOMETRY: Readonly<Record<string, readonly MigProfile[]>> = buildGeometry();

/** MIG-capable GPU models, in the table's order. */
export const MIG_MODELS: readonly string[] = Object.freeze(Object.keys(MIG_GEOMETRY));

/** Every MIG profile name of some model, each once (models in GPU_MODELS order, rows in table order). */
export const MIG_PROFILE_NAMES: readonly string[] = Object.freeze([...new Set(GPU_MODELS.flatMap((m) => (MIG_GEOMETRY[m] ?? []).map((p) => p.name)))]);

/** Profiles of a model (empty when the model is not MIG-capable). */
export function migProfilesFor(model: string): readonly MigProfile[] {
  return Object.prototype.hasOwnProperty.call(MIG_GEOMETRY, model) ? MIG_GEOMETRY[model]! : [];
}

/** One profile of a model by name, or undefined. */
export function migProfile(model: string, name: string): MigProfile | undefined {
  return migProfilesFor(model).find((p) => p.name === name);
}

/** The profile of a class (a row) on a model, or undefined when the model is not MIG-capable. */
export function migProfileOfClass(model: string, cls: MigClass): MigProfile | undefined {
  return migProfilesFor(model).find((p) => p.class === cls);
}

/** Every model on which a profile name exists. */
export function modelsWithMigProfile(name: string): string[] {
  return MIG_MODELS.filter((m) => migProfile(m, name) !== undefined);
}

/**
 * Compute slices of a MIG profile: on `model` when given, else on any model that has it (a name
 * has the same compute slices on every model). Undefined when no such profile exists.
 */
export function migComputeSlices(profile: string, model?: string): number | undefined {
  const models = model === undefined ? MIG_MODELS : [model];
  for (const m of models) {
    const p = migProfile(m, profile);
    if (p) return p.compute;
  }
  return undefined;
}

/**
 * How much of a GPU a MIG slice counts for (quota, usage, the console's bars): its compute
 * slices / 7. On `model` when given, else on any model that has the profile; undefined when no
 * such profile exists (the caller decides what an unknown profile counts for).
 */
export function migSliceFraction(profile: string, model?: string): number | undefined {
  const compute = migComputeSlices(profile, model);
  return compute === undefined ? undefined : compute / MIG_COMPUTE_SLICES;
}

// ---------------------------------------------------------------------------------------------
// Node personas

/** What a node runs: containers (training, batch, notebooks), VMs with whole GPUs, or inference. */
export const PERSONAS = ['container', 'vm-passthrough', 'inference'] as const;
export type Persona = (typeof PERSONAS)[number];
