/** Topology score plugins. */
import type { ScorePlugin } from '../framework';

/** NVLink locality for multi-GPU replicas: fewer NVLink domains spanned is better. */
export function nvlinkScore(): ScorePlugin {
  return {
    name: 'nvlink',
    score(_s, job, n, option) {
      const gpus = option.gpus;
      if (job.kind !== 'whole' || gpus.length < 2) return 0;
      // distinct NVLink domains among the option's GPUs (a handful: no set to build)
      let domains = 0;
      for (let a = 0; a < gpus.length; a++) {
        const d = n.gpus[gpus[a]!]!.domain;
        let b = 0;
        while (b < a && n.gpus[gpus[b]!]!.domain !== d) b++;
        if (b === a) domains++;
      }
      return -(domains - 1);
    },
  };
}
