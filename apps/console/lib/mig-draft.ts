import { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS, migProfile, type Gpu, type MigLayoutEntry } from '@gantry/contracts';
import { validateMigLayout, type MigLayoutValidation } from '@gantry/scheduler';

/** What a layout offers: slices by profile, compute and memory slots partitioned. */
export interface MigCapacity {
  slices: { profile: string; count: number }[];
  compute: number;
  memorySlots: number;
}

export function migCapacity(model: string, layout: readonly MigLayoutEntry[]): MigCapacity {
  const counts = new Map<string, number>();
  let compute = 0;
  let memorySlots = 0;
  for (const e of layout) {
    const p = migProfile(model, e.profile);
    counts.set(e.profile, (counts.get(e.profile) ?? 0) + 1);
    compute += p?.compute ?? 0;
    memorySlots += p?.size ?? 0;
  }
  const order = (name: string) => -(migProfile(model, name)?.size ?? 0);
  const slices = [...counts.entries()]
    .map(([profile, count]) => ({ profile, count }))
    .sort((a, b) => order(a.profile) - order(b.profile) || a.profile.localeCompare(b.profile));
  return { slices, compute, memorySlots };
}

/** "2 x 3g.40gb + 1g.10gb" ("whole GPU" for none). */
export function describeCapacity(c: MigCapacity): string {
  if (!c.slices.length) return 'whole GPU (MIG off)';
  return c.slices.map((s) => (s.count > 1 ? `${s.count} x ${s.profile}` : s.profile)).join(' + ');
}

export interface MigDraftCheck {
  /** The engine's own rule check (the API answers with the same rule names). */
  validation: MigLayoutValidation;
  before: MigCapacity;
  after: MigCapacity;
  /** Slices in use by jobs that the new layout does not keep: the change waits until they end. */
  busyRemoved: { profile: string; start: number; jobId: string }[];
  unchanged: boolean;
}

const key = (l: readonly MigLayoutEntry[]) =>
  l
    .map((e) => `${e.profile}@${e.start}`)
    .sort()
    .join(',');

/** Checks a drafted layout of a GPU against NVIDIA's geometry and compares it with what the GPU has now. */
export function checkMigDraft(gpu: Gpu, draft: readonly MigLayoutEntry[]): MigDraftCheck {
  const current = (gpu.mig?.layout ?? []).map((s) => ({ profile: s.profile, start: s.start }));
  const busy = (gpu.mig?.layout ?? []).filter((s) => s.jobId);
  const busyRemoved = busy
    .filter((s) => !draft.some((e) => e.profile === s.profile && e.start === s.start))
    .map((s) => ({ profile: s.profile, start: s.start, jobId: s.jobId! }));
  // a whole GPU running a job loses it to any MIG layout
  if (gpu.mode === 'whole' && gpu.jobId && draft.length) busyRemoved.push({ profile: 'whole GPU', start: 0, jobId: gpu.jobId });
  return {
    validation: validateMigLayout(gpu.model, draft),
    before: migCapacity(gpu.model, gpu.mode === 'mig' ? current : []),
    after: migCapacity(gpu.model, draft),
    busyRemoved,
    unchanged: key(current) === key(draft) && (gpu.mode === 'mig') === draft.length > 0,
  };
}

/** Which placed slice (index in the draft) covers memory slot `slot`, or -1. */
export function sliceAt(model: string, draft: readonly MigLayoutEntry[], slot: number): number {
  return draft.findIndex((e) => {
    const size = migProfile(model, e.profile)?.size ?? 1;
    return slot >= e.start && slot < e.start + size;
  });
}

export { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS };
