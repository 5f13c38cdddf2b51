/**
 * A signal the fragmentation score reads from the learned mix and the nodes' free capacity
 * (model pressure, whole-host pressure): learned again whenever the mix changes, re-read every
 * `every` placements, and published (a new version, which re-scores node states) only when it
 * moved by at least `minChange`, so that small drifts do not throw away the score cache.
 */
import type { ShapeMix } from './shape-mix';
import type { NodeStates } from './views';

export interface FreeCapacitySignalOptions {
  /** Re-read free capacity every this many placements (0: only when the mix changes). */
  every?: number;
  /** Publish a new value only when it moved by at least this much. */
  minChange?: number;
}

export abstract class FreeCapacitySignal<T> {
  private mixVersion = -1;
  /** Bumps whenever the published value changes (part of the score plugin's epoch). */
  version = 0;
  private readonly every: number;
  private readonly minChange: number;
  private calls = 0;

  constructor(
    readonly mix: ShapeMix,
    /** The engine's nodes, read one per distinct state (each counted for every node in it). */
    protected readonly nodes: NodeStates,
    options: FreeCapacitySignalOptions = {},
  ) {
    this.every = options.every ?? 0;
    this.minChange = options.minChange ?? 0;
  }

  /** Call once per placement attempt: re-reads free capacity on schedule; returns the version. */
  epoch(): number {
    if (this.mixVersion !== this.mix.version) this.sync();
    else if (this.every > 0 && this.reads() && ++this.calls >= this.every) {
      this.calls = 0;
      this.offer(this.compute(), this.minChange);
    }
    return this.version;
  }

  /** Brings the signal up to the mix before a read of the published value. */
  protected current(): void {
    if (this.mixVersion !== this.mix.version) this.sync();
  }

  /** Reads what the signal needs from the mix (called when the mix changed). */
  protected abstract learn(): void;
  /** Whether free capacity matters at all under the learned mix (false: nothing is read). */
  protected abstract reads(): boolean;
  /** The value from the nodes' free capacity now. */
  protected abstract compute(): T;
  /** How far `next` is from the published value (0: the same). */
  protected abstract distance(next: T): number;
  /** Publishes `next`. */
  protected abstract adopt(next: T): void;

  private sync(): void {
    this.learn();
    this.mixVersion = this.mix.version;
    this.calls = 0;
    this.offer(this.compute(), 0);
  }

  private offer(next: T, minChange: number): void {
    const moved = this.distance(next);
    if (moved === 0 || (minChange > 0 && moved < minChange)) return;
    this.adopt(next);
    this.version++;
  }
}
