import { migProfile, validateMigLayout } from '@gantry/scheduler';
import type { InvariantViolation } from './types';
import { groupBy, kindOf, type ClusterState } from './state';

/** Family 2: a MIG allocation holds a slice that exists (same GPU, start and profile). */
export function checkMigSlicesExist(s: Pick<ClusterState, 'allocations' | 'instances'>): InvariantViolation[] {
  const slices = new Set(s.instances.map((i) => `${i.gpuId}:${i.start}:${i.profile}`));
  const out: InvariantViolation[] = [];
  for (const a of s.allocations) {
    if (kindOf(a) !== 'mig' || slices.has(`${a.gpuId}:${a.migStart}:${a.migProfile}`)) continue;
    out.push({
      rule: 'mig-instance-missing',
      subject: `gpu ${a.gpuId}:mig:${a.migStart}`,
      message: `allocation ${a.id} holds MIG slice ${a.migProfile}@${a.migStart} of GPU ${a.gpuId}, but the GPU has no such slice (destroyed or never created)`,
    });
  }
  return out;
}

/**
 * Family 3: each GPU's slices form a layout NVIDIA accepts on its model (validateMigLayout:
 * profiles, starts, overlap, compute, maxima), with the geometry's sizes, only on MIG-capable
 * GPUs; and, as the inventory sync and commitMigLayout write them, a GPU is in `mig` mode
 * exactly when it has slices (MIG off deletes every slice and sets `whole`).
 */
export function checkMigLayouts(s: Pick<ClusterState, 'gpus' | 'instances'>): InvariantViolation[] {
  const byGpu = groupBy(s.instances, (i) => i.gpuId);
  const out: InvariantViolation[] = [];
  for (const gpu of s.gpus) {
    const slices = byGpu.get(gpu.id) ?? [];
    const subject = `gpu ${gpu.id}`;
    if (slices.length) {
      const layout = [...slices].sort((a, b) => a.start - b.start);
      const text = layout.map((i) => `${i.profile}@${i.start}`).join(', ');
      if (!gpu.migCapable) {
        out.push({ rule: 'mig-layout-invalid', subject, message: `GPU ${gpu.id} (${gpu.model}) is not MIG-capable but has MIG slices ${text}` });
      } else {
        const v = validateMigLayout(gpu.model, layout);
        const wrongSize = layout.find((i) => migProfile(gpu.model, i.profile) && migProfile(gpu.model, i.profile)!.size !== i.size);
        if (!v.ok)
          out.push({
            rule: 'mig-layout-invalid',
            subject,
            message: `GPU ${gpu.id} (${gpu.model}) has MIG layout ${text}, which NVIDIA refuses (${v.rule}: ${v.message})`,
          });
        else if (wrongSize)
          out.push({
            rule: 'mig-layout-invalid',
            subject,
            message: `GPU ${gpu.id}: slice ${wrongSize.profile}@${wrongSize.start} is recorded as ${wrongSize.size} memory slots; the profile uses ${migProfile(gpu.model, wrongSize.profile)!.size}`,
          });
      }
    }
    if ((gpu.mode === 'mig') !== slices.length > 0) {
      out.push({
        rule: 'gpu-mode-instances-mismatch',
        subject,
        message: slices.length
          ? `GPU ${gpu.id} has ${slices.length} MIG slice(s) but is in ${gpu.mode} mode`
          : `GPU ${gpu.id} is in mig mode but has no MIG slice: nothing can be placed on it`,
      });
    }
  }
  return out;
}
