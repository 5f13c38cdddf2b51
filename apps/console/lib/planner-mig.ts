import { MIG_COMPUTE_SLICES, MIG_MEMORY_SLOTS, migProfile } from '@gantry/contracts';

/**
 * A what-if MIG layout: as many instances of one profile as fit a GPU of `model` (legal starts,
 * no overlap of memory slots, at most 7 compute slices, the profile's per-GPU maximum). An empty
 * profile name is MIG off ([]).
 */
export function fillLayout(model: string, profileName: string): { profile: string; start: number }[] {
  const p = profileName ? migProfile(model, profileName) : undefined;
  if (!p) return [];
  const used = new Array<boolean>(MIG_MEMORY_SLOTS).fill(false);
  const out: { profile: string; start: number }[] = [];
  let compute = 0;
  for (const start of [...p.starts].sort((a, b) => a - b)) {
    if (out.length >= p.maxPerGpu || compute + p.compute > MIG_COMPUTE_SLICES) break;
    if (start + p.size > MIG_MEMORY_SLOTS) continue;
    if (used.slice(start, start + p.size).some(Boolean)) continue;
    for (let s = start; s < start + p.size; s++) used[s] = true;
    compute += p.compute;
    out.push({ profile: p.name, start });
  }
  return out;
}
