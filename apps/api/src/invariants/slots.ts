import type { InvariantViolation } from './types';
import { expectedSlot, groupBy, kindOf, type AllocationKind, type ClusterState, type GpuRow } from './state';

/**
 * Family 1, GPU slots: among active allocations a GPU is held by one whole-GPU allocation, or
 * by MIG slices (one allocation per slice start), or by shares summing to at most 1000 milli.
 */
export function checkSlots(s: Pick<ClusterState, 'allocations'>): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  for (const [gpuId, allocs] of groupBy(s.allocations, (a) => a.gpuId)) {
    const whole = allocs.filter((a) => kindOf(a) === 'whole');
    const others = allocs.filter((a) => kindOf(a) !== 'whole');
    if (whole.length > 1) {
      out.push({
        rule: 'slot-double-booked',
        subject: `gpu ${gpuId}:whole`,
        message: `GPU ${gpuId} is held whole by ${whole.length} active allocations (${ids(whole)}); one GPU can be given to one holder only`,
      });
    }
    if (whole.length > 0 && others.length > 0) {
      out.push({
        rule: 'slot-double-booked',
        subject: `gpu ${gpuId}`,
        message: `GPU ${gpuId} is held whole (${ids(whole)}) and also by ${others.length} MIG slice or share allocation(s) (${ids(others)})`,
      });
    }
    for (const [start, slices] of groupBy(
      others.filter((a) => kindOf(a) === 'mig'),
      (a) => a.migStart,
    )) {
      if (slices.length > 1) {
        out.push({
          rule: 'slot-double-booked',
          subject: `gpu ${gpuId}:mig:${start}`,
          message: `MIG slice at memory slot ${start} of GPU ${gpuId} is held by ${slices.length} active allocations (${ids(slices)})`,
        });
      }
    }
    const shares = others.filter((a) => kindOf(a) === 'share');
    const milli = shares.reduce((n, a) => n + a.milli, 0);
    if (milli > 1000) {
      out.push({
        rule: 'slot-double-booked',
        subject: `gpu ${gpuId}`,
        message: `shares on GPU ${gpuId} add up to ${milli}/1000 of the GPU (${ids(shares)}): the GPU is oversubscribed`,
      });
    }
  }
  return out;
}

/**
 * Family 1, kind vs mode: the engine places whole GPUs only on `whole` GPUs, MIG slices only on
 * `mig` GPUs and shares only on `shared` ones (a share turns an idle whole GPU into a shared one
 * in the same transaction: takeGpuSlots' makeShared). A MIG change commits only once no
 * non-MIG allocation is active (commitMigLayout), so the mode never changes under a holder.
 * The allocation's node and model must also be those of its GPU (quotas count by model).
 */
export function checkAllocationModes(s: Pick<ClusterState, 'allocations' | 'gpus'>): InvariantViolation[] {
  const gpus = new Map(s.gpus.map((g) => [g.id, g]));
  const out: InvariantViolation[] = [];
  for (const a of s.allocations) {
    const gpu = gpus.get(a.gpuId);
    if (!gpu) continue; // a foreign key: cannot happen
    const kind = kindOf(a);
    const problems: string[] = [];
    if (MODE_OF[kind] !== gpu.mode) problems.push(`it holds ${KIND_TEXT[kind]} but the GPU is in ${gpu.mode} mode`);
    if (a.gpuModel !== gpu.model) problems.push(`it names GPU model ${a.gpuModel} but the GPU is a ${gpu.model}`);
    if (a.nodeId !== gpu.nodeId) problems.push(`it names node ${a.nodeId} but the GPU is on node ${gpu.nodeId}`);
    if (problems.length)
      out.push({ rule: 'allocation-mode-mismatch', subject: `allocation ${a.id}`, message: `allocation ${a.id} on GPU ${a.gpuId}: ${problems.join('; ')}` });
  }
  return out;
}

/**
 * Family 4, the unique slot key: `<gpuId>:whole` or `<gpuId>:mig:<start>` exactly while a
 * whole-GPU or MIG allocation is active; shares always null (they are guarded by a row lock on
 * the GPU instead, schema comment); null once released.
 */
export function checkActiveSlots(s: Pick<ClusterState, 'allocations' | 'endedWithSlot'>): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  for (const a of s.allocations) {
    const want = expectedSlot(a);
    if (a.activeSlot !== want) {
      out.push({
        rule: 'active-slot-mismatch',
        subject: `allocation ${a.id}`,
        message: `active allocation ${a.id} on GPU ${a.gpuId} has activeSlot ${a.activeSlot ?? 'null'} instead of ${want ?? 'null'}: the unique slot guard ${want ? 'does not protect it' : 'is misused'}`,
      });
    }
  }
  for (const a of s.endedWithSlot) {
    out.push({
      rule: 'active-slot-mismatch',
      subject: `allocation ${a.id}`,
      message: `released allocation ${a.id} still holds activeSlot ${a.activeSlot}: GPU ${a.gpuId}'s slot can never be taken again`,
    });
  }
  return out;
}

const MODE_OF: Record<AllocationKind, GpuRow['mode']> = { whole: 'whole', mig: 'mig', share: 'shared' };
const KIND_TEXT: Record<AllocationKind, string> = { whole: 'the whole GPU', mig: 'a MIG slice', share: 'a share' };

function ids(xs: { id: string }[]): string {
  return xs.map((x) => x.id).join(', ');
}
