/** The `cpu-strand` score plugin: minus the GPUs a placement strands for lack of CPU. */
import { CpuStrandModel } from '../cpu-strand';
import type { ScorePlugin } from '../framework';
import type { EngineHandle } from '../views';
import { wholeHostModel } from './fragmentation';

/** Minus the GPUs a placement strands for lack of CPU (see CpuStrandModel). */
export function cpuStrandScore(engine: EngineHandle, args: Record<string, unknown>): ScorePlugin {
  const whole = args.wholeHost === true ? wholeHostModel(engine, args) : null;
  const model = new CpuStrandModel(engine.mix, (args.scale as number | undefined) ?? 1, whole);
  return {
    name: 'cpu-strand',
    epoch: () => engine.mix.version + (whole ? whole.epoch() : 0),
    score: (_s, job, n, option) => -model.change(job, n, option) / 1000,
  };
}
