/**
 * MIG through the GPU Operator's mig-manager. The `nvidia.com/mig.config` label is per node, so a
 * layout change on one GPU becomes a named mig-parted config describing every GPU of the node:
 * `gantry-<hash>` of the per-GPU layouts (or `all-disabled`). The layouts Gantry asked for are kept
 * in the node annotation `gantry.io/mig-layouts`, because mig-parted configs hold profile counts,
 * not placements. Pure functions.
 */
import { createHash } from 'node:crypto';
import { findMigProfile, migProfileCounts, migProfilesOf } from '../shared/mig-layout';
import type { MigSliceSpec } from '../types';

/** MIG layout per GPU index of one node; a missing or empty entry means MIG off. */
export type NodeMigLayouts = Record<number, MigSliceSpec[]>;

export interface MigPartedDeviceConfig {
  devices: number[] | 'all';
  'mig-enabled': boolean;
  'mig-devices'?: Record<string, number>;
}

export interface MigPartedConfig {
  version: 'v1';
  'mig-configs': Record<string, MigPartedDeviceConfig[]>;
}

export const MIG_DISABLED_CONFIG = 'all-disabled';

/** Canonical form: GPUs by index, slices by start, empty layouts dropped. */
export function normalizeMigLayouts(layouts: NodeMigLayouts): NodeMigLayouts {
  const normalized: NodeMigLayouts = {};
  for (const index of Object.keys(layouts)
    .map(Number)
    .sort((a, b) => a - b)) {
    const layout = layouts[index];
    if (layout.length === 0) continue;
    normalized[index] = [...layout].sort((a, b) => a.start - b.start).map(({ profile, start }) => ({ profile, start }));
  }
  return normalized;
}

/** The mig-parted config name for a node's layouts: stable, a valid label value (<= 63 chars). */
export function migConfigName(layouts: NodeMigLayouts): string {
  const normalized = normalizeMigLayouts(layouts);
  if (Object.keys(normalized).length === 0) return MIG_DISABLED_CONFIG;
  const digest = createHash('sha256').update(JSON.stringify(normalized)).digest('hex');
  return `gantry-${digest.slice(0, 16)}`;
}

/** mig-parted device entries for a node of `gpuCount` GPUs; GPUs with equal layouts share one entry. */
export function migPartedDevices(layouts: NodeMigLayouts, gpuCount: number): MigPartedDeviceConfig[] {
  const normalized = normalizeMigLayouts(layouts);
  const groups = new Map<string, { devices: number[]; layout: MigSliceSpec[] }>();
  for (let index = 0; index < gpuCount; index++) {
    const layout = normalized[index] ?? [];
    const key = JSON.stringify(migProfileCounts(layout));
    const group = groups.get(key) ?? { devices: [], layout };
    group.devices.push(index);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ devices, layout }) =>
    layout.length === 0 ? { devices, 'mig-enabled': false } : { devices, 'mig-enabled': true, 'mig-devices': migProfileCounts(layout) },
  );
}

export function migPartedConfig(name: string, devices: MigPartedDeviceConfig[]): MigPartedConfig {
  return { version: 'v1', 'mig-configs': { [name]: devices } };
}

/** `existing` (a parsed mig-parted config file, possibly empty) with `name` set to `devices`. */
export function withMigPartedConfig(existing: unknown, name: string, devices: MigPartedDeviceConfig[]): MigPartedConfig {
  const configs = typeof existing === 'object' && existing !== null && 'mig-configs' in existing ? ((existing as MigPartedConfig)['mig-configs'] ?? {}) : {};
  const disabled: MigPartedDeviceConfig[] = [{ devices: 'all', 'mig-enabled': false }];
  return { version: 'v1', 'mig-configs': { [MIG_DISABLED_CONFIG]: disabled, ...configs, [name]: devices } };
}

/**
 * The layout a named config gives one GPU: Gantry's own configs from the annotation, and the
 * operator's stock ones (`all-disabled`, `all-balanced`, `all-<profile>`) from the geometry.
 * Undefined when the config is someone else's custom one.
 */
export function layoutOfNamedConfig(model: string, configName: string): MigSliceSpec[] | undefined {
  if (configName === MIG_DISABLED_CONFIG) return [];
  const profiles = migProfilesOf(model);
  if (configName === 'all-balanced') {
    const byClass = (id: string) => profiles.find((p) => p.id === id)?.name;
    const [one, two, three] = [byClass('1g'), byClass('2g'), byClass('3g')];
    if (!one || !two || !three) return undefined;
    return [
      { profile: one, start: 0 },
      { profile: one, start: 1 },
      { profile: two, start: 2 },
      { profile: three, start: 4 },
    ];
  }
  const profile = configName.startsWith('all-') ? findMigProfile(model, configName.slice(4)) : undefined;
  if (!profile) return undefined;
  const layout: MigSliceSpec[] = [];
  let nextFreeSlot = 0;
  for (const start of profile.starts) {
    if (start < nextFreeSlot || layout.length === profile.maxPerGpu) continue;
    layout.push({ profile: profile.name, start });
    nextFreeSlot = start + profile.memorySlots;
  }
  return layout;
}
