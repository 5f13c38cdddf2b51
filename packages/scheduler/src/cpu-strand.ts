/**
 * The CPU-stranding model: GPUs a node cannot use because the CPU left beside them is too
 * little to feed them at the mix's CPU per GPU. Scored by plugins/cpu-strand.ts and folded into
 * the gantry profile's fragmentation score.
 */
import type { ShapeMix } from './shape-mix';
import { type DeviceOption, type JobView, type NodeView, poolFree } from './views';

/**
 * CPU stranding: with the mix's CPU per GPU thousandth c (expected CPU demand / expected GPU
 * demand, CPU-only shapes included), a node's idle GPU milli beyond what its free CPU can feed
 * (cpuFree / c) is expected to stay idle. `change` is the stranded GPU milli a placement adds.
 */
export class CpuStrandModel {
  private version = -1;
  private ratio = 0;
  constructor(
    readonly mix: ShapeMix,
    /** Multiplies the CPU per GPU thousandth (1: the mix's own ratio). */
    private readonly scale = 1,
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
    if (idle < 0) {
      idle = 0;
      for (const g of n.gpus) idle += poolFree(g);
    }
    let used = 0;
    for (const pos of option.gpus) used += job.kind === 'whole' ? poolFree(n.gpus[pos]!) : job.kind === 'share' ? job.milli : 0;
    return strandedMilli(idle - used, n.cpuFree - job.cpu, ratio) - strandedMilli(idle, n.cpuFree, ratio);
  }
}

/** Idle GPU milli that `cpuFree` cannot feed at `cpuPerMilli` CPU per GPU thousandth. */
export function strandedMilli(idleMilli: number, cpuFree: number, cpuPerMilli: number): number {
  return Math.max(0, idleMilli - cpuFree / cpuPerMilli);
}
