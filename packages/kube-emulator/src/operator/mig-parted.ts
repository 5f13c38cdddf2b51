/**
 * What mig-parted would create for a named config on one node: the device entries of the config
 * (Gantry's ConfigMap, or the operator's stock `all-disabled` / `all-balanced` / `all-<profile>`),
 * placed on each GPU with the placements Gantry recorded in `gantry.io/mig-layouts` when that
 * annotation stands for this config, else largest-first at the first legal start. Every GPU's
 * result is checked against the catalog's geometry: an illegal layout fails the apply, as
 * mig-parted fails on hardware. Pure functions.
 */
import { findMigProfile, kubernetesSpecs, migLayoutViolations, migProfileCounts, type MigSliceSpec } from '@gantry/driver';
import { MIG_MEMORY_SLOTS } from '@gantry/contracts';
import type { EmulatedNode } from '../cluster/emulated-node';

const { MIG_DISABLED_CONFIG, layoutOfNamedConfig, migConfigName } = kubernetesSpecs;
type MigPartedConfig = kubernetesSpecs.MigPartedConfig;
type MigPartedDeviceConfig = kubernetesSpecs.MigPartedDeviceConfig;

export type MigApplyPlan = { ok: true; layouts: Record<number, MigSliceSpec[]> } | { ok: false; reason: string };

/** The mig-parted config file, or undefined when it is not one. */
export function parseMigPartedConfig(parsed: unknown): MigPartedConfig | undefined {
  if (typeof parsed !== 'object' || parsed === null || !('mig-configs' in parsed)) return undefined;
  return parsed as MigPartedConfig;
}

export function planMigConfig(
  node: EmulatedNode,
  configName: string,
  file: MigPartedConfig | undefined,
  annotatedLayouts: Record<number, MigSliceSpec[]> | undefined,
): MigApplyPlan {
  const model = node.gpus[0]?.model;
  if (model === undefined) return { ok: false, reason: `node ${node.name} has no GPU` };
  const counts = countsPerGpu(node, configName, file);
  if (!counts.ok) return counts;
  const useAnnotation = annotatedLayouts !== undefined && migConfigName(annotatedLayouts) === configName;
  const layouts: Record<number, MigSliceSpec[]> = {};
  for (const gpu of node.gpus) {
    const wanted = counts.perGpu[gpu.index] ?? {};
    let layout: MigSliceSpec[];
    if (useAnnotation) {
      layout = (annotatedLayouts[gpu.index] ?? []).map((s) => ({ ...s }));
      if (!sameCounts(migProfileCounts(layout), wanted)) {
        return { ok: false, reason: `GPU ${gpu.index}: gantry.io/mig-layouts does not match the counts of config ${configName}` };
      }
    } else {
      const placed = placeLargestFirst(gpu.model, wanted);
      if (!placed.ok) return { ok: false, reason: `GPU ${gpu.index}: ${placed.reason}` };
      layout = placed.layout;
    }
    const violations = migLayoutViolations(gpu.model, layout);
    if (violations.length > 0) {
      return { ok: false, reason: `GPU ${gpu.index} (${gpu.model}): ${violations.map((v) => `[${v.rule}] ${v.message}`).join('; ')}` };
    }
    layouts[gpu.index] = layout;
  }
  return { ok: true, layouts };
}

function countsPerGpu(
  node: EmulatedNode,
  configName: string,
  file: MigPartedConfig | undefined,
): { ok: true; perGpu: Record<number, Record<string, number>> } | { ok: false; reason: string } {
  const perGpu: Record<number, Record<string, number>> = {};
  if (configName === MIG_DISABLED_CONFIG) return { ok: true, perGpu };
  const entries: MigPartedDeviceConfig[] | undefined = file?.['mig-configs']?.[configName];
  if (entries) {
    for (const gpu of node.gpus) {
      const entry = entries.find((e) => e.devices === 'all' || (Array.isArray(e.devices) && e.devices.includes(gpu.index)));
      perGpu[gpu.index] = entry?.['mig-enabled'] ? { ...entry['mig-devices'] } : {};
    }
    return { ok: true, perGpu };
  }
  for (const gpu of node.gpus) {
    const stock = layoutOfNamedConfig(gpu.model, configName);
    if (!stock) return { ok: false, reason: `unknown MIG config "${configName}" (not in the mig-parted ConfigMap, not a stock config for ${gpu.model})` };
    perGpu[gpu.index] = migProfileCounts(stock);
  }
  return { ok: true, perGpu };
}

/**
 * Placements for profile counts: largest instances first (MIG rule 5), each at the lowest legal
 * start that leaves room for the rest (a small backtracking search: at most 7 instances).
 */
export function placeLargestFirst(model: string, counts: Record<string, number>): { ok: true; layout: MigSliceSpec[] } | { ok: false; reason: string } {
  const wanted: { profile: string; size: number; starts: readonly number[] }[] = [];
  for (const [name, count] of Object.entries(counts)) {
    const profile = findMigProfile(model, name);
    if (!profile) return { ok: false, reason: `${model} has no MIG profile "${name}"` };
    for (let i = 0; i < count; i++) wanted.push({ profile: name, size: profile.memorySlots, starts: profile.starts });
  }
  if (wanted.length > MIG_MEMORY_SLOTS) return { ok: false, reason: `${wanted.length} instances do not fit in ${MIG_MEMORY_SLOTS} memory slots` };
  wanted.sort((a, b) => b.size - a.size);
  const used = new Array<boolean>(MIG_MEMORY_SLOTS).fill(false);
  const layout: MigSliceSpec[] = [];
  const place = (i: number): boolean => {
    if (i === wanted.length) return true;
    const slice = wanted[i];
    for (const start of slice.starts) {
      if (start + slice.size > MIG_MEMORY_SLOTS || used.slice(start, start + slice.size).some(Boolean)) continue;
      used.fill(true, start, start + slice.size);
      layout.push({ profile: slice.profile, start });
      if (place(i + 1)) return true;
      layout.pop();
      used.fill(false, start, start + slice.size);
    }
    return false;
  };
  if (!place(0)) {
    const asked = Object.entries(counts)
      .map(([p, n]) => `${n} x ${p}`)
      .join(', ');
    return { ok: false, reason: `no placement of ${asked} fits the ${MIG_MEMORY_SLOTS} memory slots of a ${model}` };
  }
  return { ok: true, layout: layout.sort((a, b) => a.start - b.start) };
}

function sameCounts(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => (a[k] ?? 0) === (b[k] ?? 0));
}
