import { MIG_COMPUTE_SLICES, migComputeSlices, type Gpu } from '@gantry/contracts';

export type GpuStatus = 'free' | 'partial' | 'allocated' | 'unhealthy';

/** Compute slices of a MIG profile ("3g.40gb" -> 3; 0 for a profile the GPU catalog does not know). */
export const migCompute = (profile: string) => migComputeSlices(profile) ?? 0;

/** How much of a GPU is held, from 0 to 1 (MIG: compute slices / 7; shared: milli / 1000). */
export function gpuUsedFraction(g: Gpu): number {
  if (g.mode === 'whole') return g.jobId ? 1 : 0;
  if (g.mode === 'mig') {
    const used = (g.mig?.layout ?? []).filter((s) => s.jobId).reduce((n, s) => n + migCompute(s.profile), 0);
    return Math.min(1, used / MIG_COMPUTE_SLICES);
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
