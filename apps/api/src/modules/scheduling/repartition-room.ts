import { migProfile } from '@gantry/contracts';
import type { ClusterSnapshot } from '@gantry/scheduler';

/** Whole GPUs a cycle could not place, of one of `gpuModels` (any model when empty). */
export interface WholeGpuDemand {
  count: number;
  gpuModels?: string[];
}

/**
 * Whether MIG work the engine could not place will be served by a re-partition rather than by
 * preempting somebody: the node manager's MIG planner cuts an idle whole GPU into slices at once
 * (its hold only applies to GPUs that run work), and never below the whole-GPU demand of the
 * queue. So a MIG job waits for the re-partition while the cluster has an idle whole GPU of an
 * allowed model, on a schedulable container node, beyond what the unplaced whole-GPU work asks
 * of that model. At 10,000 nodes with 50,000 idle GPUs, a high-priority notebook no longer
 * checkpoints a lower-priority job of its team for a slice a free GPU is about to offer.
 * Conservative: a free slot on a GPU already in MIG mode is not counted (it may be on hold).
 * Counted on the cycle's snapshot: when the cycle itself took the last idle GPU, the job preempts
 * one cycle later than it could.
 */
export class RepartitionRoom {
  private spare?: Map<string, number>;

  constructor(
    private readonly snapshot: ClusterSnapshot,
    private readonly wholeDemand: readonly WholeGpuDemand[],
  ) {}

  /** A re-partition of an idle GPU can make a `profile` slice on one of `gpuModels` (any model when empty). */
  serves(profile: string, gpuModels?: readonly string[]): boolean {
    for (const [model, n] of (this.spare ??= this.count()))
      if (n > 0 && (!gpuModels?.length || gpuModels.includes(model)) && migProfile(model, profile)) return true;
    return false;
  }

  /** Idle whole GPUs per model, minus the whole-GPU demand that could only use them. */
  private count(): Map<string, number> {
    const idle = new Map<string, number>();
    for (const n of this.snapshot.nodes) {
      if (!n.schedulable || n.persona !== 'container') continue;
      for (const g of n.gpus) if (g.mode === 'whole' && !g.allocated && g.healthy && g.schedulable) idle.set(g.model, (idle.get(g.model) ?? 0) + 1);
    }
    for (const [model, n] of idle) {
      let left = n;
      for (const d of this.wholeDemand) if (!d.gpuModels?.length || d.gpuModels.includes(model)) left -= d.count;
      idle.set(model, left);
    }
    return idle;
  }
}
