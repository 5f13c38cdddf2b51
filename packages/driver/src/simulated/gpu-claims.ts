/**
 * What a job holds on a GPU (the whole GPU, one MIG slice, or a fractional share) and whether a
 * new claim collides with the ones already held: the simulator's guard against double allocation.
 */

export type GpuClaim = { nodeName: string; gpuIndex: number } & (
  { kind: 'whole' } | { kind: 'mig'; profile: string; start: number } | { kind: 'share'; milli: number }
);

export type HeldGpuClaim = GpuClaim & { jobId: string };

/** Why `wanted` cannot be held next to `held`, or undefined when it can. */
export function claimConflict(held: readonly HeldGpuClaim[], wanted: GpuClaim): string | undefined {
  const sameGpu = held.filter((c) => c.nodeName === wanted.nodeName && c.gpuIndex === wanted.gpuIndex);
  const where = `GPU ${wanted.gpuIndex} of node ${wanted.nodeName}`;
  for (const claim of sameGpu) {
    if (claim.kind === 'whole' || wanted.kind === 'whole') return `${where} is held by job ${claim.jobId}`;
    if (claim.kind !== wanted.kind) return `${where} mixes MIG slices and shares (job ${claim.jobId})`;
    if (claim.kind === 'mig' && wanted.kind === 'mig' && claim.start === wanted.start) {
      return `MIG slice ${claim.profile}@${claim.start} on ${where} is held by job ${claim.jobId}`;
    }
  }
  if (wanted.kind === 'share') {
    const used = sameGpu.reduce((sum, c) => sum + (c.kind === 'share' ? c.milli : 0), 0);
    if (used + wanted.milli > 1000) return `${where} has ${1000 - used} milli-GPU free, ${wanted.milli} asked`;
  }
  return undefined;
}
