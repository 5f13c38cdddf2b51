import { migSliceFraction, modelsWithMigProfile, type JobResources } from '@gantry/contracts';

/**
 * Quota units of one replica: whole GPUs count 1 each, a MIG slice its compute slices / 7,
 * a share its fraction (docs/design.md section 3).
 */
export function replicaGpuUnits(r: Pick<JobResources, 'gpus' | 'migProfile' | 'gpuFraction' | 'gpuModel'>): number {
  if (r.gpus) return r.gpus;
  if (r.gpuFraction) return r.gpuFraction;
  if (r.migProfile) {
    const model = r.gpuModel ?? modelsWithMigProfile(r.migProfile)[0];
    return (model ? migSliceFraction(r.migProfile, model) : undefined) ?? 1;
  }
  return 0;
}
