import { MIG_COMPUTE_SLICES, migComputeSlices, partitionGeometry, type Gpu } from '@gantry/contracts';

export type GpuStatus = 'free' | 'partial' | 'allocated' | 'unhealthy';

/** Compute slices of a partition profile ("3g.40gb" -> 3, "cpx_nps4" -> 1 XCD; 0 for a profile the GPU catalog does not know). */
export const migCompute = (profile: string, model?: string) => migComputeSlices(profile, model) ?? 0;

/** Compute slices of a model (7 SM slices on MIG GPUs, 8 XCDs on an MI300X). */
export const computeSlicesOf = (model: string) => partitionGeometry(model)?.computeSlices ?? MIG_COMPUTE_SLICES;

/** How much of a GPU is held, from 0 to 1 (partitions: compute slices / the model's; shared: milli / 1000). */
export function gpuUsedFraction(g: Gpu): number {
  if (g.mode === 'whole') return g.jobId ? 1 : 0;
  if (g.mode === 'mig') {
    const used = (g.mig?.layout ?? []).filter((s) => s.jobId).reduce((n, s) => n + migCompute(s.profile, g.model), 0);
    return Math.min(1, used / computeSlicesOf(g.model));
  }
  return Math.min(1, (g.sharedMilliUsed ?? 0) / 1000);
}

export function gpuStatus(g: Gpu): GpuStatus {
  if (g.health === 'unhealthy') return 'unhealthy';
  const used = gpuUsedFraction(g);
  if (used <= 0) return 'free';
  return used >= 1 ? 'allocated' : 'partial';
}

export function gpuTitle(g: Gpu): string {
  const parts = [`GPU ${g.index} · ${g.model}`, `health ${g.health}`, `mode ${g.mode}`];
  if (g.mode === 'whole' && g.jobId) parts.push(`job ${g.jobId}`);
  if (g.mode === 'mig') parts.push(`MIG ${(g.mig?.layout ?? []).map((s) => `${s.profile}${s.jobId ? '*' : ''}`).join(' ') || 'no slices'}`);
  if (g.mode === 'shared') parts.push(`shared ${(g.sharedMilliUsed ?? 0) / 10}% used`);
  return parts.join('\n');
}
