/**
 * The AMD GPU Operator's Device Config Manager (DCM, docs/accelerators.md): its ConfigMap holds
 * `config.json`, `{ "gpu-config-profiles": { "<name>": { "skippedGPUs": { "ids": [..] },
 * "profiles": [{ "computePartition": "CPX", "memoryPartition": "NPS4", "numGPUsAssigned": n }] } } }`;
 * a node label (`dcm.amd.com/gpu-config-profile`) picks a profile; DCM hands the profile's entries
 * out in order to the node's GPUs that are not skipped, and reports `dcm.amd.com/gpu-config-profile-state`
 * (`success` / `failure`). Its checks: the assigned GPUs plus the skipped ones are every GPU of the
 * node, and one profile has one memory mode. Pure functions, shared with the kube-emulator's DCM.
 */
import { createHash } from 'node:crypto';
import { partitionModeLayout, partitionModeOf } from '@gantry/contracts';
import type { MigSliceSpec } from '../types';
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import { AMD_GPU_LABELS, AMD_GPU_RESOURCE, amdPartitionResource } from '../shared/labels';

/** The taint DCM's docs have a node carry while it is partitioned: it evicts every pod without the toleration. */
export const DCM_TAINT = { key: 'amd-dcm', value: 'up', effect: 'NoExecute' } as const;

export interface DcmPartitionEntry {
  computePartition: string;
  memoryPartition: string;
  numGPUsAssigned: number;
}

export interface DcmProfile {
  skippedGPUs?: { ids: number[] };
  profiles: DcmPartitionEntry[];
}

export interface DcmConfigFile {
  'gpu-config-profiles'?: Record<string, DcmProfile>;
  [other: string]: unknown;
}

/**
 * The profile that moves the GPUs in `changes` to their new layouts and leaves every other GPU as
 * it is (skipped): entries in GPU order, one per run of equal modes. Throws naming the GPUs when
 * a layout is no mode, or when the changed GPUs would mix memory modes (DCM refuses that).
 */
export function dcmProfileFor(
  model: string,
  gpuCount: number,
  changes: Readonly<Record<number, readonly MigSliceSpec[]>>,
): { name: string; profile: DcmProfile } {
  const changed = Object.keys(changes)
    .map(Number)
    .filter((i) => i >= 0 && i < gpuCount)
    .sort((a, b) => a - b);
  const entries: DcmPartitionEntry[] = [];
  for (const index of changed) {
    const mode = partitionModeOf(model, changes[index]!);
    if (!mode) throw new Error(`GPU ${index}: its layout is no partition mode of ${model}`);
    const last = entries[entries.length - 1];
    if (last && last.computePartition === mode.computeMode && last.memoryPartition === mode.memoryMode) last.numGPUsAssigned++;
    else entries.push({ computePartition: mode.computeMode, memoryPartition: mode.memoryMode, numGPUsAssigned: 1 });
  }
  const memory = new Set(entries.map((e) => e.memoryPartition));
  if (memory.size > 1) {
    throw new Error(`the Device Config Manager changes GPUs of one memory mode at a time (asked for ${[...memory].join(' and ')} together)`);
  }
  const skipped = Array.from({ length: gpuCount }, (_, i) => i).filter((i) => !changed.includes(i));
  const profile: DcmProfile = { skippedGPUs: { ids: skipped }, profiles: entries };
  return { name: dcmProfileName(changed, entries), profile };
}

/** `gantry-g3-cpx-nps4`, `gantry-g0-1-spx-nps1`; a hash when that would not fit a label value (63). */
function dcmProfileName(changed: number[], entries: DcmPartitionEntry[]): string {
  const modes = entries.map((e) => `${e.computePartition}-${e.memoryPartition}`.toLowerCase());
  const readable = `gantry-g${changed.join('-')}-${[...new Set(modes)].join('-')}`;
  if (readable.length <= 63 && new Set(modes).size === 1) return readable;
  const hash = createHash('sha1').update(JSON.stringify({ changed, entries })).digest('hex').slice(0, 12);
  return `gantry-${hash}`;
}

/** The config file text with `name` set to `profile`, other profiles and keys kept. */
export function withDcmProfile(text: string | undefined, name: string, profile: DcmProfile): string {
  const file = parseDcmConfig(text) ?? {};
  const profiles = { ...(file['gpu-config-profiles'] ?? {}), [name]: profile };
  return JSON.stringify({ ...file, 'gpu-config-profiles': profiles }, null, 2);
}

/** The config file, or undefined when there is none or it is not a JSON object. */
export function parseDcmConfig(text: string | undefined): DcmConfigFile | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as DcmConfigFile) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What DCM would do with profile `name` on a node of `gpuCount` GPUs of `model`: the new layout
 * of every GPU it assigns, or why it fails (DCM's own checks, then the catalog's mode rules).
 */
export function planDcmProfile(
  file: DcmConfigFile | undefined,
  name: string,
  model: string,
  gpuCount: number,
): { ok: true; layouts: Record<number, MigSliceSpec[]> } | { ok: false; reason: string } {
  if (!file) return { ok: false, reason: 'ConfigMapNotPresent: no config.json, or not JSON' };
  const profile = file['gpu-config-profiles']?.[name];
  if (!profile || !Array.isArray(profile.profiles)) return { ok: false, reason: `NonExistentProfile: no profile ${name} in gpu-config-profiles` };
  const skipped = profile.skippedGPUs?.ids ?? [];
  if (skipped.some((id) => !Number.isInteger(id) || id < 0 || id >= gpuCount))
    return { ok: false, reason: `InvalidProfileInfo: skippedGPUs names a GPU the node does not have` };
  const assigned = profile.profiles.reduce((sum, e) => sum + (Number(e.numGPUsAssigned) || 0), 0);
  if (assigned + skipped.length !== gpuCount) {
    return { ok: false, reason: `InvalidProfileInfo: numGPUsAssigned (${assigned}) plus skippedGPUs (${skipped.length}) is not the node's ${gpuCount} GPUs` };
  }
  if (new Set(profile.profiles.map((e) => e.memoryPartition)).size > 1)
    return { ok: false, reason: 'InvalidProfileInfo: one profile cannot mix memory partition types' };
  const order = Array.from({ length: gpuCount }, (_, i) => i).filter((i) => !skipped.includes(i));
  const layouts: Record<number, MigSliceSpec[]> = {};
  for (const entry of profile.profiles) {
    const mode = partitionModeLayout(model, entry.computePartition, entry.memoryPartition);
    if (!mode.ok) return { ok: false, reason: `InvalidProfileInfo: ${mode.message}` };
    for (let n = 0; n < entry.numGPUsAssigned; n++) layouts[order.shift()!] = mode.layout.map((s) => ({ ...s }));
  }
  return { ok: true, layouts };
}

/** Where DCM stands on the profile the node is labelled with. */
export function dcmProgress(labels: Record<string, string> | undefined, name: string): 'applied' | 'failed' | 'waiting' {
  if (labels?.[AMD_GPU_LABELS.configProfile] !== name) return 'waiting';
  const state = labels[AMD_GPU_LABELS.configProfileState];
  return state === 'success' ? 'applied' : state === 'failure' ? 'failed' : 'waiting';
}

/** The node's taints with DCM's taint added (`true`) or removed (`false`); others kept. */
export function withDcmTaint(taints: readonly V1Taint[] | undefined, on: boolean): V1Taint[] {
  const others = (taints ?? []).filter((t) => !(t.key === DCM_TAINT.key && t.effect === DCM_TAINT.effect));
  return on ? [...others, { ...DCM_TAINT }] : others;
}

/**
 * Whether the AMD device plugin advertises the GPUs' layouts: strategy `mixed`, `amd.com/gpu` per
 * whole GPU and `amd.com/<profile>` per partition; strategy `single`, `amd.com/gpu` per whole GPU
 * or partition.
 */
export function dcmLayoutsAdvertised(node: V1Node, layouts: Readonly<Record<number, readonly MigSliceSpec[]>>): boolean {
  const capacity = node.status?.capacity ?? {};
  const mixed: Record<string, number> = {};
  let single = 0;
  for (const layout of Object.values(layouts)) {
    if (layout.length === 0) mixed[AMD_GPU_RESOURCE] = (mixed[AMD_GPU_RESOURCE] ?? 0) + 1;
    for (const slice of layout) mixed[amdPartitionResource(slice.profile)] = (mixed[amdPartitionResource(slice.profile)] ?? 0) + 1;
    single += Math.max(1, layout.length);
  }
  const amd = Object.entries(capacity).filter(([r, n]) => r.startsWith('amd.com/') && Number(n) > 0);
  const asMixed = amd.length === Object.keys(mixed).length && amd.every(([r, n]) => Number(n) === mixed[r]);
  const asSingle = amd.length === 1 && amd[0]![0] === AMD_GPU_RESOURCE && Number(amd[0]![1]) === single;
  return asMixed || asSingle;
}
