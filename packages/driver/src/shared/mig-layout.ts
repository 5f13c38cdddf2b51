/**
 * MIG layout rules over the geometry table: profile lookup, validation that names the broken
 * rule, and the creation order NVIDIA documents (largest first).
 */
import type { MigSliceSpec } from '../types';
import { migProfilesFor } from '@gantry/contracts';
import { driverClassOf, geometryOf, type MigClass } from './mig-geometry';

export interface MigProfile extends MigClass {
  name: string;
}

type Placed = { slice: MigSliceSpec; profile: MigProfile };

export type MigRule = 'mig-capable' | 'known-profile' | 'legal-start' | 'no-overlap' | 'compute-budget' | 'one-media-extension' | 'max-per-gpu' | 'one-mode';

export interface MigLayoutViolation {
  rule: MigRule;
  message: string;
}

/** A refused MIG layout; `rule` is the first broken rule, the message lists them all. */
export class MigLayoutError extends Error {
  readonly rule: MigRule;

  constructor(
    readonly model: string,
    readonly violations: MigLayoutViolation[],
  ) {
    super(`invalid MIG layout for ${model}: ${violations.map((v) => `[${v.rule}] ${v.message}`).join('; ')}`);
    this.name = 'MigLayoutError';
    this.rule = violations[0].rule;
  }
}

export function isMigCapable(model: string): boolean {
  return geometryOf(model) !== undefined;
}

/** The partition profiles a GPU model offers; empty when the model does not partition. */
export function migProfilesOf(model: string): MigProfile[] {
  return migProfilesFor(model).map((p) => ({ ...driverClassOf(p), name: p.name }));
}

export function findMigProfile(model: string, profileName: string): MigProfile | undefined {
  return migProfilesOf(model).find((p) => p.name === profileName);
}

/** Every broken rule of `layout` on a GPU of `model`; empty when the layout is valid. */
export function migLayoutViolations(model: string, layout: readonly MigSliceSpec[]): MigLayoutViolation[] {
  if (layout.length === 0) return [];
  const profiles = migProfilesOf(model);
  if (profiles.length === 0) {
    return [{ rule: 'mig-capable', message: `${model} does not support MIG or partitioning` }];
  }
  const violations: MigLayoutViolation[] = [];
  const placed: Placed[] = [];
  for (const slice of layout) {
    const profile = profiles.find((p) => p.name === slice.profile);
    if (!profile) {
      const known = profiles.map((p) => p.name).join(', ');
      violations.push({ rule: 'known-profile', message: `${model} has no MIG profile "${slice.profile}" (known: ${known})` });
    } else if (!profile.starts.includes(slice.start)) {
      violations.push({
        rule: 'legal-start',
        message: `${slice.profile} cannot start at memory slot ${slice.start} (legal starts: ${profile.starts.join(', ')})`,
      });
    } else {
      placed.push({ slice, profile });
    }
  }
  const geometry = geometryOf(model)!;
  violations.push(...overlapViolations(placed, geometry.memorySlots), ...budgetViolations(placed, geometry.computeSlices));
  if (geometry.scheme === 'modes') violations.push(...modeViolations(model, placed));
  return violations;
}

export function assertValidMigLayout(model: string, layout: readonly MigSliceSpec[]): void {
  const violations = migLayoutViolations(model, layout);
  if (violations.length > 0) throw new MigLayoutError(model, violations);
}

/** The order to create GPU instances in: largest first, then by start (docs/reference/gpu.md, MIG rule 5). */
export function migCreationOrder(model: string, layout: readonly MigSliceSpec[]): MigSliceSpec[] {
  const size = (s: MigSliceSpec) => findMigProfile(model, s.profile)?.memorySlots ?? 0;
  return [...layout].sort((a, b) => size(b) - size(a) || a.start - b.start);
}

/** Whether two layouts hold the same slices, whatever their order. */
export function sameMigLayout(a: readonly MigSliceSpec[], b: readonly MigSliceSpec[]): boolean {
  const key = (layout: readonly MigSliceSpec[]) =>
    layout
      .map((s) => `${s.profile}@${s.start}`)
      .sort()
      .join(',');
  return key(a) === key(b);
}

/** How many instances of each profile a layout holds, e.g. `{ "1g.10gb": 2, "3g.40gb": 1 }`. */
export function migProfileCounts(layout: readonly MigSliceSpec[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const slice of layout) counts[slice.profile] = (counts[slice.profile] ?? 0) + 1;
  return counts;
}

/** A 'modes' GPU (MI300X) holds every partition of one profile: a mode splits the whole GPU. */
function modeViolations(model: string, placed: readonly Placed[]): MigLayoutViolation[] {
  if (placed.length === 0) return [];
  const names = [...new Set(placed.map((p) => p.profile.name))];
  if (names.length > 1) return [{ rule: 'one-mode', message: `a ${model} runs one partition mode at a time (asked: ${names.join(', ')})` }];
  const p = placed[0]!.profile;
  if (placed.length !== p.maxPerGpu) {
    return [{ rule: 'one-mode', message: `${p.name} splits a ${model} into ${p.maxPerGpu} partitions at once (layout has ${placed.length})` }];
  }
  return [];
}

function overlapViolations(placed: readonly Placed[], memorySlots: number): MigLayoutViolation[] {
  const owner: (string | undefined)[] = new Array(memorySlots).fill(undefined);
  const violations: MigLayoutViolation[] = [];
  for (const { slice, profile } of placed) {
    const label = `${slice.profile}@${slice.start}`;
    for (let slot = slice.start; slot < slice.start + profile.memorySlots; slot++) {
      const holder = owner[slot];
      if (holder !== undefined) {
        violations.push({ rule: 'no-overlap', message: `${label} overlaps ${holder} on memory slot ${slot}` });
        break;
      }
      owner[slot] = label;
    }
  }
  return violations;
}

function budgetViolations(placed: readonly Placed[], computeSlices: number): MigLayoutViolation[] {
  const violations: MigLayoutViolation[] = [];
  const compute = placed.reduce((sum, p) => sum + p.profile.computeSlices, 0);
  if (compute > computeSlices) {
    violations.push({ rule: 'compute-budget', message: `layout uses ${compute} compute slices, a GPU has ${computeSlices}` });
  }
  const withMedia = placed.filter((p) => p.profile.mediaExtensions);
  if (withMedia.length > 1) {
    violations.push({ rule: 'one-media-extension', message: `${withMedia.length} +me instances, at most one per GPU` });
  }
  const counts = migProfileCounts(placed.map((p) => p.slice));
  for (const { profile } of placed) {
    const count = counts[profile.name];
    if (count > profile.maxPerGpu) {
      violations.push({ rule: 'max-per-gpu', message: `${count} x ${profile.name}, at most ${profile.maxPerGpu} per GPU` });
      counts[profile.name] = 0; // report each profile once
    }
  }
  return violations;
}
