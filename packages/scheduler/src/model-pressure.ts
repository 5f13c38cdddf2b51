/**
 * Model pressure: how much of a GPU model's capacity the demand that can only go there (shapes
 * pinned to model sets, from the learned mix) is expected to need. Pinned demand of a shape is
 * split over its allowed models in proportion to their capacity; a model's pressure is its
 * pinned load per GPU relative to the cluster's whole load per GPU, capped at 1 (all of it is
 * needed). A replica that uses a GPU of a pressured model is expected to displace that share of
 * pinned work: the fragmentation score charges it (args.pressure, in GPUs per GPU used). With no
 * pinned shapes in the mix every pressure is 0 and the charge vanishes.
 */
import type { ShapeMix } from './shape-mix';
import type { DeviceOption, JobView, NodeView } from './views';

export class ModelPressureModel {
  private version = -1;
  private readonly pressure = new Map<string, number>();
  private readonly capacity = new Map<string, number>();
  private capTotal = 0;

  constructor(
    readonly mix: ShapeMix,
    nodes: readonly NodeView[],
  ) {
    for (const n of nodes)
      for (const g of n.gpus) {
        if (g.mode === 'mig') continue;
        this.capacity.set(g.model, (this.capacity.get(g.model) ?? 0) + 1000);
        this.capTotal += 1000;
      }
  }

  /** Pressure of a model, 0..1 (recomputed when the mix gets a new version). */
  of(model: string): number {
    if (this.version !== this.mix.version) this.sync();
    return this.pressure.get(model) ?? 0;
  }

  private sync(): void {
    this.pressure.clear();
    let total = 0;
    const pinned = new Map<string, number>();
    for (const m of this.mix.entries) {
      if (m.kind !== 'whole' && m.kind !== 'share') continue;
      const d = m.p * m.gpus * m.milli;
      total += d;
      if (!m.models) continue;
      let cap = 0;
      for (const x of m.models) cap += this.capacity.get(x) ?? 0;
      if (cap <= 0) continue;
      for (const x of m.models) pinned.set(x, (pinned.get(x) ?? 0) + (d * (this.capacity.get(x) ?? 0)) / cap);
    }
    if (total > 0)
      for (const [x, load] of pinned) {
        const cap = this.capacity.get(x) ?? 0;
        if (cap > 0) this.pressure.set(x, Math.min(1, load / cap / (total / this.capTotal)));
      }
    this.version = this.mix.version;
  }

  /** GPUs of pinned work a placement is expected to displace. */
  cost(job: JobView, n: NodeView, option: DeviceOption): number {
    if ((job.kind !== 'whole' && job.kind !== 'share') || option.gpus.length === 0) return 0;
    const p = this.of(n.gpus[option.gpus[0]!]!.model);
    return p > 0 ? (p * job.gpus * job.milli) / 1000 : 0;
  }
}
