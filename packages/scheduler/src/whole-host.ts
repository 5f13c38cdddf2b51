/**
 * Whole hosts: nodes that can still take the learned mix's largest whole-GPU shape (G fully free
 * GPUs and its CPU), and how much of their capacity that shape's demand still to come needs.
 *
 * The largest shape's share d of the expected GPU demand (unpinned shapes of G >= 2 GPUs), over
 * the cluster's free GPU capacity F, is d x F of work still to come; the hosts offer H: per node,
 * its G-GPU blocks (G x floor(fully free GPUs / G)) times the share of the shape whose CPU fits
 * the node's free CPU. The pressure min(1, d x F / H) is the share of a host the shape is
 * expected to take whole. Used by CpuStrandModel: a host is stranded only if the shape does not
 * take it, so a placement that relieves its stranding earns (1 - pressure x CPU fit) of the
 * credit. While hosts are plentiful for the shape (default trace: d = 6%, about 0.07) a CPU-light
 * pod still earns most of it for breaking one; once the shape needs them all, none.
 *
 * Host premium: the shape's CPU demand is not one size. The part of it that asks at least c cores
 * can only use hosts with c cores free, so per CPU level c of the shape the same ratio is taken
 * over that part and those hosts: its pressure p(c). Where the hosts of a level are scarcer than
 * hosts overall (p(c) above p at the lowest level), a host at that level carries a premium
 * p(c) - p(lowest) per GPU of its blocks: what a placement that breaks a block, or takes the CPU
 * that lifts the host to that level, is expected to cost the shape's CPU-heavy replicas. Charged
 * by the fragmentation score (args.hostPremium, GPUs per GPU like model pressure). Seen on the
 * multigpu40 trace variant: 8-GPU pods asking 120 cores fit only the 128-core nodes, and pods
 * that stranded nothing there had broken them by 60% arrived.
 *
 * Free capacity is re-read every `every` placements (like model pressure) and a new pressure is
 * published (a new epoch: node states are re-scored) only when it moved by at least `minChange`.
 * With no whole shape of 2+ GPUs in the mix the pressure is 0 and nothing is read.
 */
import { fitMass, levelOf } from './fragmentation';
import { FreeCapacitySignal, type FreeCapacitySignalOptions } from './free-capacity-signal';
import { type NodeView, poolFree } from './views';

export type WholeHostOptions = FreeCapacitySignalOptions;

/** Fully free GPUs of a node (a share or a job on a GPU takes it out). */
export function wholeFreeGpus(n: NodeView): number {
  let w = 0;
  for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i]!.mode !== 'mig' && poolFree(n.gpus[i]!) === 1000) w++;
  return w;
}

/** What the model publishes: the overall pressure and the premium per CPU level of the shape. */
interface HostPressure {
  pressure: number;
  /** Premium (0..1, per GPU) of a host whose free CPU reaches level k (cpu[k]), non-decreasing in k. */
  premium: Float64Array;
}

export class WholeHostModel extends FreeCapacitySignal<HostPressure> {
  private value = 0;
  private premiums: Float64Array = new Float64Array(0);
  /** GPUs of the largest unpinned whole shape (0: none of 2+ GPUs in the mix). */
  private gpus = 0;
  /** Its share of the expected GPU demand. */
  private share = 0;
  /** Its CPU thresholds ascending and the cumulative share of its mass (1 at the end). */
  private cpu = new Float64Array(0);
  private cum = new Float64Array(0);

  /** Share of a host the largest whole shape is expected to take, 0..1. */
  pressure(): number {
    this.current();
    return this.value;
  }

  /**
   * Probability that the largest whole shape takes a node with `wholeFree` fully free GPUs and
   * `cpuFree` CPU whole: the pressure times the share of the shape whose CPU fits (0 when the
   * node has fewer than G fully free GPUs).
   */
  takeWhole(wholeFree: number, cpuFree: number): number {
    const p = this.pressure();
    if (p === 0 || wholeFree < this.gpus) return 0;
    return p * fitMass(this.cpu, this.cum, cpuFree);
  }

  /**
   * Host premium a placement costs, in GPUs: the node's blocks x G x its level's premium, before
   * minus after placing one replica of `job` that takes `wholeUsed` fully free GPUs and its CPU.
   */
  premiumCost(n: NodeView, wholeUsed: number, cpu: number): number {
    this.current();
    const free = wholeFreeGpus(n);
    if (free < this.gpus || this.premiums.length === 0) return 0;
    const before = Math.floor(free / this.gpus) * this.levelPremium(n.cpuFree);
    const left = free - wholeUsed;
    const after = left < this.gpus ? 0 : Math.floor(left / this.gpus) * this.levelPremium(n.cpuFree - cpu);
    return (before - after) * this.gpus;
  }

  private levelPremium(cpuFree: number): number {
    const k = levelOf(this.cpu, cpuFree);
    return k < 0 ? 0 : this.premiums[k]!;
  }

  protected reads(): boolean {
    return this.gpus > 0;
  }

  protected learn(): void {
    let total = 0;
    let gpus = 0;
    for (const m of this.mix.entries) {
      if (m.kind !== 'whole' && m.kind !== 'share') continue;
      total += m.p * m.gpus * m.milli;
      if (m.kind === 'whole' && !m.models && m.gpus >= 2) gpus = Math.max(gpus, m.gpus);
    }
    const items: { cpu: number; p: number }[] = [];
    let d = 0;
    for (const m of this.mix.entries)
      if (m.kind === 'whole' && !m.models && m.gpus === gpus && gpus > 0) {
        items.push({ cpu: m.cpu, p: m.p });
        d += m.p;
      }
    items.sort((a, b) => a.cpu - b.cpu);
    let c = 0;
    this.cpu = Float64Array.from(items.map((x) => x.cpu));
    this.cum = Float64Array.from(items.map((x) => (c += x.p) / d));
    this.gpus = total > 0 ? gpus : 0;
    this.share = total > 0 ? (d * gpus * 1000) / total : 0;
  }

  protected compute(): HostPressure {
    const levels = this.cpu.length;
    if (this.gpus === 0) return { pressure: 0, premium: new Float64Array(levels) };
    let free = 0;
    let hosts = 0;
    // block capacity (GPU milli) of the hosts whose free CPU reaches each level, exactly
    const atLevel = new Float64Array(levels);
    this.nodes.eachState((n, count) => {
      for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i]!.mode !== 'mig') free += poolFree(n.gpus[i]!) * count;
      const blocks = Math.floor(wholeFreeGpus(n) / this.gpus);
      if (blocks === 0) return;
      hosts += count * blocks * this.gpus * 1000 * fitMass(this.cpu, this.cum, n.cpuFree);
      const k = levelOf(this.cpu, n.cpuFree);
      if (k >= 0) atLevel[k] += count * blocks * this.gpus * 1000;
    });
    const need = this.share * free;
    const ratio = (want: number, offer: number) => (offer > 0 ? Math.min(1, want / offer) : want > 0 ? 1 : 0);
    // hosts reaching level k or above serve the shape's mass from level k up
    const level = new Float64Array(levels);
    let offer = 0;
    for (let k = levels - 1; k >= 0; k--) {
      offer += atLevel[k]!;
      level[k] = ratio(need * (1 - (k > 0 ? this.cum[k - 1]! : 0)), offer);
    }
    const premium = new Float64Array(levels);
    let top = 0;
    for (let k = 0; k < levels; k++) {
      top = Math.max(top, level[k]!);
      premium[k] = top - level[0]!;
    }
    return { pressure: ratio(need, hosts), premium };
  }

  protected distance(next: HostPressure): number {
    let moved = Math.abs(next.pressure - this.value);
    if (next.premium.length !== this.premiums.length) return Number.POSITIVE_INFINITY;
    for (let k = 0; k < next.premium.length; k++) moved = Math.max(moved, Math.abs(next.premium[k]! - this.premiums[k]!));
    return moved;
  }

  protected adopt(next: HostPressure): void {
    this.value = next.pressure;
    this.premiums = next.premium;
  }
}
