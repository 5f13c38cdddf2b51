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
 * Free capacity is re-read every `every` placements (like model pressure) and a new pressure is
 * published (a new epoch: node states are re-scored) only when it moved by at least `minChange`.
 * With no whole shape of 2+ GPUs in the mix the pressure is 0 and nothing is read.
 */
import { fitMass } from './fragmentation';
import { FreeCapacitySignal, type FreeCapacitySignalOptions } from './free-capacity-signal';
import { type NodeView, poolFree } from './views';

export type WholeHostOptions = FreeCapacitySignalOptions;

/** Fully free GPUs of a node (a share or a job on a GPU takes it out). */
export function wholeFreeGpus(n: NodeView): number {
  let w = 0;
  for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i]!.mode !== 'mig' && poolFree(n.gpus[i]!) === 1000) w++;
  return w;
}

export class WholeHostModel extends FreeCapacitySignal<number> {
  private value = 0;
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

  protected compute(): number {
    if (this.gpus === 0) return 0;
    let free = 0;
    let hosts = 0;
    this.nodes.eachState((n, count) => {
      for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i]!.mode !== 'mig') free += poolFree(n.gpus[i]!) * count;
      const blocks = Math.floor(wholeFreeGpus(n) / this.gpus);
      if (blocks > 0) hosts += count * blocks * this.gpus * 1000 * fitMass(this.cpu, this.cum, n.cpuFree);
    });
    const need = this.share * free;
    return hosts > 0 ? Math.min(1, need / hosts) : need > 0 ? 1 : 0;
  }

  protected distance(next: number): number {
    return Math.abs(next - this.value);
  }

  protected adopt(next: number): void {
    this.value = next;
  }
}
