import type { GpuView } from './engine';

/** Free thousandths of a GPU in the whole/share pool (MIG GPUs are not in the pool). */
export function poolFree(g: GpuView): number {
  if (!g.usable) return 0;
  if (g.mode === 'whole') return g.allocated ? 0 : 1000;
  if (g.mode === 'shared') return 1000 - g.milliUsed;
  return 0;
}
