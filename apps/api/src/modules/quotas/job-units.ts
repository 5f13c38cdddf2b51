import type { JobResources } from '@gantry/contracts';
import { migProfile, modelsWithMigProfile } from '@gantry/scheduler';

/**
 * Quota units of one replica: whole GPUs count 1 each, a MIG slice its compute slices / 7,
 * a share its fraction (docs/design.md section 3).
 */
export function replicaGpuUnits(r: Pick<JobResources, 'gpus' | 'migProfile' | 'gpuFraction' | 'gpuModel'>): number {
  if (r.gpus) return r.gpus;
  if (r.gpuFraction) return r.gpuFraction;
  if (r.migProfile) {
    const model = r.gpuModel ?? modelsWithMigProfile(r.migProfile)[0];
    const p = model ? migProfile(model, r.migProfile) : undefined;
    return (p?.compute ?? 7) / 7;
  }
  return 0;
}
