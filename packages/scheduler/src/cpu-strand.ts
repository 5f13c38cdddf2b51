/**
 * The CPU-stranding model: GPUs a node cannot use because the CPU left beside them is too
 * little to feed them at the mix's CPU per GPU. Scored by plugins/cpu-strand.ts and folded into
 * the gantry profile's fragmentation score.
 */
import type { ShapeMix } from './shape-mix';
import { type DeviceOption, type JobView, type NodeView, poolFree } from './views';
import { type WholeHostModel, wholeFreeGpus } from './whole-host';

/**
 * CPU stranding: with the mix's CPU per GPU thousandth c (expected CPU demand / expected GPU
 * demand, CPU-only shapes included), a node's idle GPU milli beyond what its free CPU can feed
 * (cpuFree / c) is expected to stay idle. `change` is the stranded GPU milli a placement adds.
 *
 * With a WholeHostModel, a placement that lowers the stranding of a node the mix's largest
 * whole-GPU shape may still take whole earns the credit only for the part expected when that
 * shape does not take it (x (1 - its take probability)): the shape brings its own CPU, so a large
 * node it fills strands nothing, and a small pod that breaks it relieves nothing. Stranding a
 * placement adds is charged in full (the node loses CPU or GPUs either way).
 */
export class CpuStrandModel {
  private version = -1;
  private ratio = 0;
  constructor(
    readonly mix: ShapeMix,
    /** Multiplies the CPU per GPU thousandth (1: the mix's own ratio). */
    private readonly scale = 1,
    /** Nodes the largest whole shape may take whole (null: plain stranding). */
    private readonly whole: WholeHostModel | null = null,
  ) {}

  /** CPU milli the learned mix asks per GPU thousandth (0 when it holds no GPU shape). */
  cpuPerGpuMilli(): number {
    if (this.version !== this.mix.version) {
      let cpu = 0;
      let gpu = 0;
      for (const m of this.mix.entries) {
        cpu += m.p * m.cpu;
        if (m.kind === 'whole' || m.kind === 'share') gpu += m.p * m.gpus * m.milli;
      }
      this.ratio = gpu > 0 ? (this.scale * cpu) / gpu : 0;
      this.version = this.mix.version;
    }
    return this.ratio;
  }

  /**
   * Stranded GPU milli after - before placing one replica of `job` with `option`; `idle` is the
   * node's idle GPU milli when the caller already knows it.
   */
  change(job: JobView, n: NodeView, option: DeviceOption, idle = -1): number {
    const ratio = this.cpuPerGpuMilli();
    if (ratio <= 0) return 0;
    const gpus = n.gpus;
    if (idle < 0) {
      idle = 0;
      for (let i = 0; i < gpus.length; i++) idle += poolFree(gpus[i]!);
    }
    let used = 0;
    const picked = option.gpus;
    if (job.kind === 'whole') for (let i = 0; i < picked.length; i++) used += poolFree(gpus[picked[i]!]!);
    else if (job.kind === 'share') used = picked.length * job.milli;
    const before = strandedMilli(idle, n.cpuFree, ratio);
    const after = strandedMilli(idle - used, n.cpuFree - job.cpu, ratio);
    const d = after - before;
    // a credit on a whole host pays only for the stranding expected if the large shape does not take it
    return d < 0 && this.whole !== null ? d * (1 - this.whole.takeWhole(wholeFreeGpus(n), n.cpuFree)) : d;
  }
}

/** Idle GPU milli that `cpuFree` cannot feed at `cpuPerMilli` CPU per GPU thousandth. */
export function strandedMilli(idleMilli: number, cpuFree: number, cpuPerMilli: number): number {
  return Math.max(0, idleMilli - cpuFree / cpuPerMilli);
}
