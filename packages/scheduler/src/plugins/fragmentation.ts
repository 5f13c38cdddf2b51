/**
 * Fragmentation score plugins: `fragmentation` (Gantry: the expected fragmentation a placement
 * adds under the learned shape mix, with CPU stranding and model pressure folded in) and `fgd` (the FGD paper's
 * integer score, for the baseline). The measure itself: ../fragmentation.ts.
 */
import { CpuStrandModel } from '../cpu-strand';
import { FragmentationModel } from '../fragmentation';
import { ModelPressureModel } from '../model-pressure';
import { WholeHostModel } from '../whole-host';
import type { ScorePlugin } from '../framework';
import { ShapeMix } from '../shape-mix';
import type { ShapeCount } from '../types';
import { type DeviceOption, type EngineHandle, type NodeView, poolFree } from '../views';

/**
 * Gantry's fragmentation score: minus the expected fragmentation added, in GPUs, rounded down to
 * args.quantum; minus args.strand x the GPUs the placement strands for lack of CPU (CpuStrandModel;
 * with args.wholeHost, not counting nodes the mix's largest whole shape is expected to take whole);
 * minus args.pressure x the pinned GPUs displaced (ModelPressureModel); minus args.hostPremium x
 * the premium of scarce CPU levels' whole hosts it breaks (WholeHostModel.premiumCost).
 */
export function fragmentationScore(engine: EngineHandle, args: Record<string, unknown>): ScorePlugin {
  const model = new FragmentationModel(engine.mix, 'fragmentation', args.memory === true, args.memory !== true && args.grouped !== false);
  const quantum = (args.quantum as number | undefined) ?? 0;
  const floor = (args.minQuantum as number | undefined) ?? 0;
  const relative = args.relative === true;
  // CPU stranding folded in (weight args.strand, after the quantum): one plugin call per option
  const strandW = (args.strand as number | undefined) ?? 0;
  // stranding counted only where the mix's largest whole shape is not expected to take the node
  const whole = strandW > 0 && args.wholeHost === true ? wholeHostModel(engine, args) : null;
  const strand = new CpuStrandModel(engine.mix, (args.strandScale as number | undefined) ?? 1, whole);
  // pinned work displaced from pressured GPU models (weight args.pressure, after the quantum)
  const pressureW = (args.pressure as number | undefined) ?? 0;
  const pressure =
    pressureW > 0
      ? new ModelPressureModel(engine.mix, engine, {
          every: args.pressureEvery as number | undefined,
          minChange: args.pressureMinChange as number | undefined,
        })
      : null;
  // hosts of the largest whole shape at scarce CPU levels (weight args.hostPremium, GPUs per GPU)
  const premiumW = whole !== null ? ((args.hostPremium as number | undefined) ?? 0) : 0;
  return {
    name: 'fragmentation',
    // each part's version only grows, so the sum moves whenever one of them does
    epoch: () => engine.mix.version + (pressure ? pressure.epoch() : 0) + (whole ? whole.epoch() : 0),
    score(_s, job, n, option) {
      const v = -model.change(job, n, option) / 1000;
      const q = relative ? Math.max(floor, (quantum * job.gpus * job.milli) / 1000) : quantum;
      const f = q > 0 ? Math.floor(v / q) * q : v;
      const g = strandW > 0 ? f - (strandW * strand.change(job, n, option, model.idle(n))) / 1000 : f;
      const h = pressure ? g - pressureW * pressure.cost(job, n, option) : g;
      return premiumW > 0 ? h - premiumW * whole!.premiumCost(n, wholeUsed(n, option), job.cpu) : h;
    },
  };
}

/** Fully free GPUs an option takes (a share or a whole GPU on one; none on a MIG slice). */
function wholeUsed(n: NodeView, option: DeviceOption): number {
  if (option.slice >= 0) return 0;
  let used = 0;
  for (let i = 0; i < option.gpus.length; i++) {
    const g = n.gpus[option.gpus[i]!]!;
    if (g.mode !== 'mig' && poolFree(g) === 1000) used++;
  }
  return used;
}

/** The whole-host model of a score plugin's args (wholeHostEvery, wholeHostMinChange). */
export function wholeHostModel(engine: EngineHandle, args: Record<string, unknown>): WholeHostModel {
  return new WholeHostModel(engine.mix, engine, {
    every: args.wholeHostEvery as number | undefined,
    minChange: args.wholeHostMinChange as number | undefined,
  });
}

/**
 * The FGD paper's score, faithfully: int(sigmoid((before - after) / 1000) * 100) with a fixed
 * mix of typical shapes (args.shapes: the trace's shape counts, or the engine's learned mix).
 */
export function fgdScore(engine: EngineHandle, args: Record<string, unknown>): ScorePlugin {
  let mix: ShapeMix = engine.mix;
  const shapes = args.shapes as ShapeCount[] | undefined;
  if (shapes) {
    mix = new ShapeMix({ coverage: (args.coverage as number | undefined) ?? 0.95 });
    for (const s of shapes) mix.add(engine.mixShape(s.request, 'container'), s.count);
    mix.freeze();
  }
  const model = new FragmentationModel(mix, 'fgd');
  return {
    name: 'fgd',
    epoch: () => mix.version,
    score(_s, job, n, option) {
      return Math.trunc(100 / (1 + Math.exp(model.change(job, n, option) / 1000)));
    },
  };
}
