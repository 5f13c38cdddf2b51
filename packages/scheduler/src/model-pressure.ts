/**
 * Model pressure: how much of a GPU model's free capacity the demand that can only go there
 * (shapes pinned to model sets, from the learned mix) is expected to need before the cluster
 * is full. A pinned shape's share d of the expected GPU demand, over the cluster's free GPU
 * capacity F, is d x F of work still to come; it is split over its allowed models in proportion
 * to their free capacity F_x. A model's pressure is min(1, its pinned work to come / F_x): the
 * share of what is still free on it that pinned work is expected to need (how much pinned demand
 * is unmet, not the pinned share alone). A replica that uses a GPU of a model is expected to
 * displace that much pinned work per GPU used: the fragmentation score charges it
 * (args.pressure, GPUs per GPU displaced).
 *
 * The free capacities are read from the engine's nodes every `every` placements, so a model
 * that fills faster than the cluster gets more pressed, one that stays empty less; a new
 * pressure is published (a new epoch, which re-scores node states) only when one moved by at
 * least `minChange`. With no pinned shapes in the mix every pressure is 0, nothing is read and
 * the charge vanishes.
 */
import { FreeCapacitySignal, type FreeCapacitySignalOptions } from './free-capacity-signal';
import { type DeviceOption, type JobView, type NodeView, poolFree } from './views';

export type ModelPressureOptions = FreeCapacitySignalOptions;

export class ModelPressureModel extends FreeCapacitySignal<Map<string, number>> {
  private readonly pressure = new Map<string, number>();
  /** Pinned shapes of the mix: share of expected GPU demand and allowed models. */
  private pinned: { d: number; models: string[] }[] = [];

  /** Pressure of a model, 0..1. */
  of(model: string): number {
    this.current();
    return this.pressure.get(model) ?? 0;
  }

  protected reads(): boolean {
    return this.pinned.length > 0;
  }

  protected learn(): void {
    let total = 0;
    const pinned: { d: number; models: string[] }[] = [];
    for (const m of this.mix.entries) {
      if (m.kind !== 'whole' && m.kind !== 'share') continue;
      const d = m.p * m.gpus * m.milli;
      total += d;
      if (m.models) pinned.push({ d, models: [...m.models] });
    }
    this.pinned = total > 0 ? pinned.map((x) => ({ d: x.d / total, models: x.models })) : [];
  }

  protected compute(): Map<string, number> {
    const out = new Map<string, number>();
    if (this.pinned.length === 0) return out;
    const free = new Map<string, number>();
    let all = 0;
    this.nodes.eachState((n, count) => {
      for (const g of n.gpus) {
        if (g.mode === 'mig') continue;
        const f = poolFree(g) * count;
        free.set(g.model, (free.get(g.model) ?? 0) + f);
        all += f;
      }
    });
    const need = new Map<string, number>();
    for (const s of this.pinned) {
      let cap = 0;
      for (const x of s.models) cap += free.get(x) ?? 0;
      for (const x of s.models) {
        if (!free.has(x)) continue;
        // nothing free on any allowed model: every GPU of them that frees up is needed
        const part = cap > 0 ? (free.get(x)! / cap) * s.d * all : Number.POSITIVE_INFINITY;
        need.set(x, (need.get(x) ?? 0) + part);
      }
    }
    for (const [x, w] of need) {
      const f = free.get(x)!;
      out.set(x, f > 0 ? Math.min(1, w / f) : w > 0 ? 1 : 0);
    }
    return out;
  }

  protected distance(next: Map<string, number>): number {
    let moved = next.size !== this.pressure.size ? Number.POSITIVE_INFINITY : 0;
    for (const [x, p] of next) moved = Math.max(moved, Math.abs(p - (this.pressure.get(x) ?? 0)));
    return moved;
  }

  protected adopt(next: Map<string, number>): void {
    this.pressure.clear();
    for (const [x, p] of next) this.pressure.set(x, p);
  }

  /** GPUs of pinned work a placement is expected to displace. */
  cost(job: JobView, n: NodeView, option: DeviceOption): number {
    if ((job.kind !== 'whole' && job.kind !== 'share') || option.gpus.length === 0) return 0;
    const p = this.of(n.gpus[option.gpus[0]!]!.model);
    return p > 0 ? (p * job.gpus * job.milli) / 1000 : 0;
  }
}
