/**
 * The GPU catalog: what Gantry knows of the GPU models it runs (memory, NVLink, MIG, power,
 * default price), their partition geometry as data (NVIDIA MIG, docs/reference/gpu.md section 1;
 * AMD Instinct compute x memory partition modes, docs/accelerators.md) and the node personas.
 * A new accelerator enters as catalog entries here: a spec, and (when it partitions) a
 * PARTITION_SOURCES entry; the rules in the engine and the drivers read them generically.
 * The one copy of these facts: the engine, the drivers, the API and the console all read it.
 * Data and lookups only; the rules over them (layout validation, MIG planning) live in the engine
 * and the drivers.
 */

// ---------------------------------------------------------------------------------------------
// GPU models

/** Gantry's GPU model names, in the catalog's order. */
export const GPU_MODELS = ['H100-80GB', 'H200-141GB', 'B200-180GB', 'A100-80GB', 'A100-40GB', 'MI300X-192GB'] as const;
export type GpuModelName = (typeof GPU_MODELS)[number];

export interface GpuModelSpec {
  /** Gantry's model name, e.g. 'H100-80GB'. */
  model: GpuModelName;
  /** Memory in the model's name, GB. */
  memoryGB: number;
  /** Framebuffer size as NVML reports it, MiB. */
  memoryMiB: number;
  /** NVLink: on HGX boards (the SXM parts here) NVSwitch joins every GPU of a node (AMD: Infinity Fabric / xGMI, the same role). */
  nvlink: boolean;
  /** Can be partitioned (it has a partition geometry below: MIG or partition modes). */
  migCapable: boolean;
  /** Who makes it: decides the device plugin's resource names and labels on Kubernetes. */
  vendor: GpuVendor;
  /** Power draw when idle, W. */
  idleW: number;
  /** Power draw at full load (the SXM part's TDP), W. */
  busyW: number;
  /** Default price of a GPU-hour (the API's GANTRY_GPU_PRICES overrides it). */
  pricePerGpuHour: number;
}

export type GpuVendor = 'nvidia' | 'amd';

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
    vendor: 'nvidia',
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
    vendor: 'nvidia',
    idleW: 75,
    busyW: 700,
    pricePerGpuHour: 3.49,
  }),
  'B200-180GB': Object.freeze({
    model: 'B200-180GB',
    memoryGB: 180,
    memoryMiB: 183359,
    nvlink: true,
    migCapable: true,
    vendor: 'nvidia',
    idleW: 120,
    busyW: 1000,
    pricePerGpuHour: 5.99,
  }),
  'A100-80GB': Object.freeze({
    model: 'A100-80GB',
    memoryGB: 80,
    memoryMiB: 81920,
    nvlink: true,
    migCapable: true,
    vendor: 'nvidia',
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
    vendor: 'nvidia',
    idleW: 50,
    busyW: 400,
    pricePerGpuHour: 1.29,
  }),
  'MI300X-192GB': Object.freeze({
    model: 'MI300X-192GB',
    memoryGB: 192,
    memoryMiB: 196592,
    nvlink: true,
    migCapable: true,
    vendor: 'amd',
    idleW: 140,
    busyW: 750,
    pricePerGpuHour: 2.99,
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
// Partition geometry: NVIDIA MIG (docs/reference/gpu.md section 1) and AMD partition modes
// (docs/accelerators.md). Both are expressed the same way: a GPU has `memorySlots` slots, a
// partition (a MIG GPU instance, an AMD compute partition) occupies slots [start, start + size)
// and `compute` of the GPU's `computeSlices`. The schemes differ in one rule, which is data too:
// 'mig' places instances of mixed profiles one by one; 'modes' splits the whole GPU at once into
// equal partitions of one profile (a compute mode x a memory mode), so a layout is all or nothing.

/** NVIDIA's MIG GPUs have 7 compute (SM) slices... */
export const MIG_COMPUTE_SLICES = 7;
/** ...and 8 memory slots; every partitionable model here has 8 slots (an MI300X: one per XCD). */
export const MIG_MEMORY_SLOTS = 8;

/** A row of NVIDIA's table: the same on every MIG-capable model, only the profile names differ. */
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

export interface MigProfile extends Omit<MigClassGeometry, 'class'> {
  /** NVIDIA: the MIG class (table row); AMD: the compute mode in lower case ('dpx', 'qpx', 'cpx'). */
  class: MigClass | (string & {});
  /** Profile name on this GPU model, e.g. '3g.40gb' (NVIDIA) or 'cpx_nps4' (AMD). */
  name: string;
  /** Memory of the partition, GB. */
  memoryGB: number;
  /** Minimum driver major version (R510 for 4g+3g is a layout rule, not a profile one). */
  minDriver?: number;
  /** 'modes' scheme: the compute and memory partition modes this profile is (e.g. 'CPX', 'NPS4'). */
  computeMode?: string;
  memoryMode?: string;
}

export type PartitionScheme = 'mig' | 'modes';

/** An AMD compute partition mode: the GPU's XCDs split into `partitions` equal logical GPUs. */
export interface ComputePartitionMode {
  /** 'SPX', 'DPX', 'QPX', 'CPX'. */
  name: string;
  partitions: number;
  /** amd-smi accelerator partition profile index. */
  profileIndex: number;
}

/** An AMD memory partition mode (NUMA nodes per socket) and the compute modes it allows. */
export interface MemoryPartitionMode {
  /** 'NPS1', 'NPS4'. */
  name: string;
  /** NUMA domains (memory partitions) the HBM is split into. */
  numaDomains: number;
  /** Compute modes valid with this memory mode (AMD's compatibility matrix). */
  computeModes: readonly string[];
}

export interface PartitionGeometry {
  model: string;
  scheme: PartitionScheme;
  /** What a compute slice is: an SM slice (NVIDIA, 1/7 of the GPU) or an XCD (AMD). */
  computeUnit: 'sm-slice' | 'xcd';
  /** Compute slices of the GPU (7 SM slices; MI300X: 8 XCDs). */
  computeSlices: number;
  /** Memory slots of the GPU (8). */
  memorySlots: number;
  /** The partition profiles, largest-first order as the table has it. */
  profiles: readonly MigProfile[];
  /** 'modes' only: compute and memory modes; the unpartitioned mode (1 partition) is the whole GPU. */
  computeModes?: readonly ComputePartitionMode[];
  memoryModes?: readonly MemoryPartitionMode[];
}

/** NVIDIA's table rows (classes), in NVIDIA's order. */
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

/** How a partitionable model is described: NVIDIA MIG profile names per row, or AMD modes. */
type PartitionSource =
  | { scheme: 'mig'; names: readonly string[]; minDriver?: Partial<Record<MigClass, number>> }
  | {
      scheme: 'modes';
      xcds: number;
      memoryGB: number;
      computeModes: readonly ComputePartitionMode[];
      memoryModes: readonly MemoryPartitionMode[];
    };

/**
 * The catalog's partitionable models. NVIDIA: profile names in the rows' order (1g, 1g+me, 1g
 * 2-slot, 2g, 3g, 4g, 7g). AMD: XCDs, HBM and the compute x memory modes with AMD's
 * compatibility rules (docs/accelerators.md). Adding a model is adding a line here.
 */
const PARTITION_SOURCES: Record<string, PartitionSource> = {
  'A100-40GB': {
    scheme: 'mig',
    names: ['1g.5gb', '1g.5gb+me', '1g.10gb', '2g.10gb', '3g.20gb', '4g.20gb', '7g.40gb'],
    // A100-40GB's 2-slot 1g (1g.10gb) needs driver >= R525.
    minDriver: { '1g.2mem': 525 },
  },
  'A100-80GB': { scheme: 'mig', names: ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'] },
  'H100-80GB': { scheme: 'mig', names: ['1g.10gb', '1g.10gb+me', '1g.20gb', '2g.20gb', '3g.40gb', '4g.40gb', '7g.80gb'] },
  'H200-141GB': { scheme: 'mig', names: ['1g.18gb', '1g.18gb+me', '1g.35gb', '2g.35gb', '3g.71gb', '4g.71gb', '7g.141gb'] },
  'B200-180GB': { scheme: 'mig', names: ['1g.23gb', '1g.23gb+me', '1g.45gb', '2g.45gb', '3g.90gb', '4g.90gb', '7g.180gb'] },
  'MI300X-192GB': {
    scheme: 'modes',
    xcds: 8,
    memoryGB: 192,
    computeModes: [
      { name: 'SPX', partitions: 1, profileIndex: 0 },
      { name: 'DPX', partitions: 2, profileIndex: 1 },
      { name: 'QPX', partitions: 4, profileIndex: 2 },
      { name: 'CPX', partitions: 8, profileIndex: 3 },
    ],
    memoryModes: [
      { name: 'NPS1', numaDomains: 1, computeModes: ['SPX', 'DPX', 'QPX', 'CPX'] },
      { name: 'NPS4', numaDomains: 4, computeModes: ['CPX'] },
    ],
  },
};

/** The name of a 'modes' profile: AMD's own (`amd.com/<compute>_<memory>`, e.g. 'cpx_nps4'). */
export function partitionModeProfileName(computeMode: string, memoryMode: string): string {
  return `${computeMode}_${memoryMode}`.toLowerCase();
}

function buildPartitionGeometry(model: string, src: PartitionSource): PartitionGeometry {
  if (src.scheme === 'mig') {
    const profiles = MIG_CLASS_GEOMETRY.map((row, i) => {
      const name = src.names[i]!;
      const p: MigProfile = { name, ...row, memoryGB: Number(/\.(\d+)gb/.exec(name)![1]) };
      const minDriver = src.minDriver?.[row.class];
      if (minDriver !== undefined) p.minDriver = minDriver;
      return Object.freeze(p);
    });
    return Object.freeze({
      model,
      scheme: 'mig',
      computeUnit: 'sm-slice',
      computeSlices: MIG_COMPUTE_SLICES,
      memorySlots: MIG_MEMORY_SLOTS,
      profiles: Object.freeze(profiles),
    });
  }
  const profiles: MigProfile[] = [];
  for (const mem of src.memoryModes) {
    for (const cm of src.computeModes) {
      // one partition is the whole GPU (MIG off); memory domains never outnumber compute partitions
      if (cm.partitions <= 1 || !mem.computeModes.includes(cm.name) || mem.numaDomains > cm.partitions) continue;
      const size = src.xcds / cm.partitions;
      profiles.push(
        Object.freeze({
          class: cm.name.toLowerCase(),
          name: partitionModeProfileName(cm.name, mem.name),
          giId: cm.profileIndex,
          compute: size,
          size,
          maxPerGpu: cm.partitions,
          starts: Object.freeze(Array.from({ length: cm.partitions }, (_, i) => i * size)),
          memoryGB: src.memoryGB / cm.partitions,
          computeMode: cm.name,
          memoryMode: mem.name,
        }),
      );
    }
  }
  profiles.sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : 1));
  return Object.freeze({
    model,
    scheme: 'modes',
    computeUnit: 'xcd',
    computeSlices: src.xcds,
    memorySlots: src.xcds,
    profiles: Object.freeze(profiles),
    computeModes: Object.freeze(src.computeModes.map((m) => Object.freeze({ ...m }))),
    memoryModes: Object.freeze(src.memoryModes.map((m) => Object.freeze({ ...m, computeModes: Object.freeze([...m.computeModes]) }))),
  });
}

/** Partition geometry per partitionable model, in the table's order (PARTITION_SOURCES). */
export const PARTITION_GEOMETRY: Readonly<Record<string, Readonly<PartitionGeometry>>> = Object.freeze(
  Object.fromEntries(Object.entries(PARTITION_SOURCES).map(([m, src]) => [m, buildPartitionGeometry(m, src)])),
);

/** A model's partition geometry, or undefined when it does not partition. */
export function partitionGeometry(model: string): Readonly<PartitionGeometry> | undefined {
  return Object.prototype.hasOwnProperty.call(PARTITION_GEOMETRY, model) ? PARTITION_GEOMETRY[model] : undefined;
}

/** The partition table: profiles per partitionable GPU model (MIG and AMD partition modes alike). */
export const MIG_GEOMETRY: Readonly<Record<string, readonly MigProfile[]>> = Object.freeze(
  Object.fromEntries(Object.entries(PARTITION_GEOMETRY).map(([m, g]) => [m, g.profiles])),
);

/** Partitionable GPU models, in the table's order. */
export const MIG_MODELS: readonly string[] = Object.freeze(Object.keys(MIG_GEOMETRY));

/** Every partition profile name of some model, each once (models in catalog order, rows in table order). */
export const MIG_PROFILE_NAMES: readonly string[] = Object.freeze([...new Set(MIG_MODELS.flatMap((m) => MIG_GEOMETRY[m]!.map((p) => p.name)))]);

/** Profiles of a model (empty when the model does not partition). */
export function migProfilesFor(model: string): readonly MigProfile[] {
  return Object.prototype.hasOwnProperty.call(MIG_GEOMETRY, model) ? MIG_GEOMETRY[model]! : [];
}

/** One profile of a model by name, or undefined. */
export function migProfile(model: string, name: string): MigProfile | undefined {
  return migProfilesFor(model).find((p) => p.name === name);
}

/** The profile of a class (a row) on a model, or undefined when the model has no such row. */
export function migProfileOfClass(model: string, cls: MigClass): MigProfile | undefined {
  return migProfilesFor(model).find((p) => p.class === cls);
}

/** Every model on which a profile name exists. */
export function modelsWithMigProfile(name: string): string[] {
  return MIG_MODELS.filter((m) => migProfile(m, name) !== undefined);
}

/**
 * Compute slices of a partition profile: on `model` when given, else on any model that has it.
 * Undefined when no such profile exists.
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
 * How much of a GPU a partition counts for (quota, usage, the console's bars): its compute
 * slices / the model's compute slices (a MIG 3g: 3/7; an MI300X cpx_nps4: 1/8). On `model` when
 * given, else on any model that has the profile; undefined when no such profile exists.
 */
export function migSliceFraction(profile: string, model?: string): number | undefined {
  const models = model === undefined ? MIG_MODELS : [model];
  for (const m of models) {
    const p = migProfile(m, profile);
    if (p) return p.compute / PARTITION_GEOMETRY[m]!.computeSlices;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Partition modes ('modes' scheme): the mode choice a person makes instead of placing slices

export type PartitionModeCheck =
  | { ok: true; profile: MigProfile | null; layout: { profile: string; start: number }[] }
  | { ok: false; rule: 'not_mode_partitioned' | 'unknown_compute_mode' | 'unknown_memory_mode' | 'incompatible_modes'; message: string };

/**
 * The layout a compute x memory mode pair gives a GPU of `model`: every partition of the mode's
 * profile (empty for the one-partition mode, the whole GPU), or the rule the pair breaks.
 */
export function partitionModeLayout(model: string, computeMode: string, memoryMode: string): PartitionModeCheck {
  const g = partitionGeometry(model);
  if (!g || g.scheme !== 'modes') return { ok: false, rule: 'not_mode_partitioned', message: `${model} is not partitioned by modes` };
  const cm = g.computeModes!.find((m) => m.name === computeMode.toUpperCase());
  if (!cm)
    return {
      ok: false,
      rule: 'unknown_compute_mode',
      message: `${model} has no compute mode ${computeMode} (modes: ${g.computeModes!.map((m) => m.name).join(', ')})`,
    };
  const mm = g.memoryModes!.find((m) => m.name === memoryMode.toUpperCase());
  if (!mm)
    return {
      ok: false,
      rule: 'unknown_memory_mode',
      message: `${model} has no memory mode ${memoryMode} (modes: ${g.memoryModes!.map((m) => m.name).join(', ')})`,
    };
  if (!mm.computeModes.includes(cm.name) || mm.numaDomains > cm.partitions) {
    return { ok: false, rule: 'incompatible_modes', message: `${mm.name} on ${model} allows only ${mm.computeModes.join(', ')} (got ${cm.name})` };
  }
  if (cm.partitions === 1) return { ok: true, profile: null, layout: [] };
  const profile = g.profiles.find((p) => p.computeMode === cm.name && p.memoryMode === mm.name)!;
  return { ok: true, profile, layout: profile.starts.map((start) => ({ profile: profile.name, start })) };
}

/** The full layout of a 'modes' profile (every partition of it), or undefined for other models and profiles. */
export function partitionModeLayoutOf(model: string, profileName: string): { profile: string; start: number }[] | undefined {
  const g = partitionGeometry(model);
  const p = g?.scheme === 'modes' ? g.profiles.find((x) => x.name === profileName) : undefined;
  return p ? p.starts.map((start) => ({ profile: p.name, start })) : undefined;
}

/**
 * The compute and memory modes a layout of a 'modes' model is in: the whole GPU (empty layout) is
 * the one-partition mode with the first memory mode; undefined for a layout that is no mode.
 */
export function partitionModeOf(model: string, layout: readonly { profile: string }[]): { computeMode: string; memoryMode: string } | undefined {
  const g = partitionGeometry(model);
  if (!g || g.scheme !== 'modes') return undefined;
  if (layout.length === 0) return { computeMode: g.computeModes!.find((m) => m.partitions === 1)!.name, memoryMode: g.memoryModes![0]!.name };
  const p = g.profiles.find((x) => x.name === layout[0]!.profile);
  if (!p || layout.length !== p.maxPerGpu || layout.some((e) => e.profile !== p.name)) return undefined;
  return { computeMode: p.computeMode!, memoryMode: p.memoryMode! };
}

// ---------------------------------------------------------------------------------------------
// Node personas

/** What a node runs: containers (training, batch, notebooks), VMs with whole GPUs, or inference. */
export const PERSONAS = ['container', 'vm-passthrough', 'inference'] as const;
export type Persona = (typeof PERSONAS)[number];
