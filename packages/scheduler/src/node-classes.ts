/**
 * Node classes and the shape board: the engine's cache.
 *
 * Nodes with the same state (persona, free CPU and memory, every GPU's model, NVLink domain,
 * mode, use and MIG slices) form a class; filters and scores run once per class and request
 * shape. Per request shape, a board holds what is known about every class as flat arrays
 * (filtered out or feasible, the epoch of its cached score, the score), so a scan over
 * thousands of nodes costs one lookup per distinct node state.
 */
import type { DeviceOption, NodeClass, NodeView } from './views';
import type { Status } from './types';

/** What one node class offers one request shape (cached until the plugins' epoch moves). */
export interface ClassEntry {
  status: Status | null;
  options: DeviceOption[];
  /** How many replicas of this shape the node could take alone (-1: not computed yet). */
  fit: number;
  epoch: number;
  /** Raw per-plugin scores per option (kept only when a plugin normalises). */
  raw: Float64Array[];
  best: number;
  bestScore: number;
}

/** Per request shape: what is known about each node class (by class id), as flat arrays. */
export interface ShapeBoard {
  /** 0 unknown, 1 feasible, k >= 2 filtered out with the status interned as k - 2 */
  state: Int32Array;
  epoch: Float64Array;
  score: Float64Array;
  /** With a tolerance: the secondary score of the chosen option. */
  score2: Float64Array;
  entry: (ClassEntry | undefined)[];
}

/** The live node classes of one engine, their flat per-class arrays and the shape boards. */
export class NodeClassIndex {
  readonly classes = new Map<string, NodeClass>();
  /** Class by dense id (undefined once it emptied). */
  readonly classById: (NodeClass | undefined)[] = [];
  /** Ids of the live classes, in liveIds[0..liveCount). */
  liveIds = new Int32Array(0);
  liveCount = 0;
  /** Per class id: the position of its first node (the tie-break order) and its node count. */
  firstPos = new Int32Array(0);
  classSize = new Int32Array(0);
  private readonly boards: (ShapeBoard | undefined)[] = [];
  private classCap = 0;
  private readonly freeIds: number[] = [];
  private nextId = 0;

  /** Puts the node in the class of its current state (after a change, or first time); `sig`: its signature when known. */
  classify(n: NodeView, sig = signature(n)): void {
    const old = n.cls as NodeClass | undefined;
    if (old && old.sig === sig) return;
    if (old) {
      const i = lowerBound(old.nodes, n.pos);
      old.nodes.splice(i, 1);
      this.classSize[old.id] = old.nodes.length;
      if (old.nodes.length === 0) this.dropClass(old);
      else this.firstPos[old.id] = old.nodes[0]!;
    }
    let cls = this.classes.get(sig);
    if (!cls) cls = this.newClass(sig);
    const nodes = cls.nodes;
    if (nodes.length === 0 || nodes[nodes.length - 1]! < n.pos) nodes.push(n.pos);
    else nodes.splice(lowerBound(nodes, n.pos), 0, n.pos);
    this.firstPos[cls.id] = nodes[0]!;
    this.classSize[cls.id] = nodes.length;
    n.cls = cls;
  }

  /** Sizes the per-class arrays for `classes` live classes at once (a class holds one node or more). */
  reserve(classes: number): void {
    if (classes > this.classCap) this.grow(Math.max(64, classes));
  }

  /** The board of a request shape (created empty on first use). */
  board(shapeId: number): ShapeBoard {
    let b = this.boards[shapeId];
    if (!b) {
      b = {
        state: new Int32Array(this.classCap),
        epoch: new Float64Array(this.classCap),
        score: new Float64Array(this.classCap),
        score2: new Float64Array(this.classCap),
        // dense from the start: writes far past the end would turn it into a slow sparse array
        entry: new Array<ClassEntry | undefined>(this.classCap).fill(undefined),
      };
      this.boards[shapeId] = b;
    }
    return b;
  }

  private newClass(sig: string): NodeClass {
    const id = this.freeIds.length ? this.freeIds.pop()! : this.nextId++;
    if (id >= this.classCap) this.grow(Math.max(64, this.classCap * 2));
    for (const b of this.boards) {
      if (!b) continue;
      b.state[id] = 0;
      b.entry[id] = undefined;
    }
    const cls: NodeClass = { id, live: this.liveCount, sig, nodes: [], scratch: new Map() };
    this.liveIds[this.liveCount++] = id;
    this.classById[id] = cls;
    this.classes.set(sig, cls);
    return cls;
  }

  private dropClass(cls: NodeClass): void {
    this.classes.delete(cls.sig);
    const lastId = this.liveIds[--this.liveCount]!;
    this.liveIds[cls.live] = lastId;
    this.classById[lastId]!.live = cls.live;
    this.classById[cls.id] = undefined;
    this.freeIds.push(cls.id);
  }

  private grow(cap: number): void {
    this.liveIds = grown(this.liveIds, cap);
    this.firstPos = grown(this.firstPos, cap);
    this.classSize = grown(this.classSize, cap);
    for (const b of this.boards) {
      if (!b) continue;
      b.state = grown(b.state, cap);
      b.epoch = grown(b.epoch, cap);
      b.score = grown(b.score, cap);
      b.score2 = grown(b.score2, cap);
      while (b.entry.length < cap) b.entry.push(undefined);
    }
    this.classCap = cap;
  }
}

function grown<A extends Int32Array | Float64Array>(a: A, cap: number): A {
  const b = new (a.constructor as new (n: number) => A)(cap);
  b.set(a);
  return b;
}

/** The state that decides every filter and score: two nodes with the same signature are interchangeable. */
export function signature(n: NodeView): string {
  let s = `${n.persona}|${n.schedulable ? 1 : 0}|${n.cpuFree}|${n.memFree}`;
  for (const g of n.gpus) {
    s += `|${g.model}:${g.domain}:${g.usable ? 1 : 0}:${g.mode}:`;
    if (g.mode === 'whole') s += g.allocated ? 1 : 0;
    else if (g.mode === 'shared') s += g.milliUsed;
    else for (const m of g.mig) s += `${m.profile}@${m.start}${m.busy ? '*' : ''},`;
  }
  return s;
}

function lowerBound(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
