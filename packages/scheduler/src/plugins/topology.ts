/** Topology score plugins. */
import type { ScorePlugin } from '../framework';

/** NVLink locality for multi-GPU replicas: fewer NVLink domains spanned is better. */
export function nvlinkScore(): ScorePlugin {
  return {
    name: 'nvlink',
    score(_s, job, n, option) {
      if (job.kind !== 'whole' || option.gpus.length < 2) return 0;
      const domains = new Set(option.gpus.map((p) => n.gpus[p]!.domain));
      return -(domains.size - 1);
    },
  };
}
