/**
 * Bin-packing and spreading score plugins: `best-fit` (the published BestFit formula),
 * `packing` (busier node, tighter GPU: Gantry's tie-breaker) and `spread` (least allocated).
 */
import { MIG_MEMORY_SLOTS } from '@gantry/contracts';
import type { ScorePlugin } from '../framework';
import { type EngineHandle, poolFree } from '../views';

/**
 * The published BestFit baseline: int((1 - (0.5 cpuLeft / cpuScale + 0.5 gpuMilliLeft / gpuScale)) * 100),
 * scales default to the largest node's CPU and GPU count in the snapshot.
 */
export function bestFitScore(engine: EngineHandle, args: Record<string, unknown>): ScorePlugin {
  let maxCpu = 0;
  let maxGpu = 0;
  for (const n of engine.nodes) {
    maxCpu = Math.max(maxCpu, n.cpuMilli);
    maxGpu = Math.max(maxGpu, n.gpus.length);
  }
  const cpuScale = (args.cpuScale as number | undefined) ?? (maxCpu || 1);
  const gpuScale = (args.gpuScale as number | undefined) ?? (maxGpu * 1000 || 1);
  const integer = args.integer !== false;
  return {
    name: 'best-fit',
    score(_s, job, n, option) {
      let gpuLeft = 0;
      for (const g of n.gpus) gpuLeft += poolFree(g);
      for (const pos of option.gpus) gpuLeft -= job.kind === 'whole' ? poolFree(n.gpus[pos]!) : job.kind === 'share' ? job.milli : 0;
      const cpuLeft = n.cpuFree - job.cpu;
      const v = (1 - (0.5 * cpuLeft) / cpuScale - (0.5 * gpuLeft) / gpuScale) * 100;
      return integer ? Math.trunc(v) : v;
    },
  };
}

/** Prefers busier nodes and tighter GPUs (consolidation); tiny weights make it a tie-breaker. */
export function packingScore(args: Record<string, unknown>): ScorePlugin {
  const absolute = args.absolute === true;
  const tightW = (args.tight as number | undefined) ?? 0.5;
  return {
    name: 'packing',
    score(_s, job, n, option) {
      let idle = 0;
      let total = 0;
      for (let i = 0; i < n.gpus.length; i++) {
        const g = n.gpus[i]!;
        idle += poolFree(g);
        if (g.usable && g.mode !== 'mig') total += 1000;
      }
      // fraction of the node's pool already in use (before), plus how tight the chosen GPU is
      let tight = 0;
      if (job.kind === 'share' && option.gpus.length) tight = 1 - (poolFree(n.gpus[option.gpus[0]!]!) - job.milli) / 1000;
      if (job.kind === 'mig' && option.gpus.length) {
        const g = n.gpus[option.gpus[0]!]!;
        let free = 0;
        for (const s of g.mig) if (!s.busy) free += s.size;
        tight = 1 - free / MIG_MEMORY_SLOTS;
      }
      if (absolute) return -idle / 8000 + tightW * tight;
      return (total > 0 ? 1 - idle / total : 0) + tightW * tight;
    },
  };
}

/** Least allocated (spreading): the more free GPU and CPU left, the better; normalised to 0..100. */
export function spreadScore(): ScorePlugin {
  return {
    name: 'spread',
    score(_s, job, n, option) {
      let idle = 0;
      for (const g of n.gpus) idle += poolFree(g);
      const used = job.kind === 'whole' ? option.gpus.length * 1000 : job.kind === 'share' ? job.milli : 0;
      return (idle - used) / Math.max(1, n.gpus.length * 1000) + (n.cpuFree - job.cpu) / Math.max(1, n.cpuMilli);
    },
    normalize(_s, _j, scores) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of scores) {
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      for (let i = 0; i < scores.length; i++) scores[i] = hi > lo ? Math.round(((scores[i]! - lo) / (hi - lo)) * 100) : 100;
    },
  };
}
