import { setImmediate as nextTurn } from 'node:timers/promises';
import type { NodeRow } from './cluster.repository';
import { sameRow } from './same-row';

/** Where the snapshot's rows come from (ClusterRepository; a fake in the unit tests). */
export interface SnapshotSource {
  allNodes(): Promise<NodeRow[]>;
  nodesByIds(ids: string[]): Promise<NodeRow[]>;
  changeMark(): Promise<bigint>;
  changesSince(mark: bigint): Promise<{ nodeIds: string[]; mark: bigint }>;
  pruneChanges(mark: bigint): Promise<number>;
}

export interface SnapshotTiming {
  /** A full reload in the background this often at least (the safety net against a change no trigger saw). */
  refreshMs: number;
  /**
   * The share of the worker's time background reloads may take: the next one is due no sooner
   * than the last one's duration divided by this (at 10,000 nodes a reload reads and compares
   * 80,000 GPUs, 1-3 s of the worker that cycles), and never later than maxRefreshMs.
   */
  refreshShare: number;
  maxRefreshMs: number;
  /** Not read for this long: the change log may have been pruned past the mark, so reload in full first. */
  gapMs: number;
  /** Change rows are kept this long at least (pruned past the mark read this long ago); above gapMs. */
  retentionMs: number;
  /** Pruning at most this often. */
  pruneEveryMs: number;
}

export const SNAPSHOT_TIMING: SnapshotTiming = {
  refreshMs: 60_000,
  refreshShare: 0.01,
  maxRefreshMs: 600_000,
  gapMs: 240_000,
  retentionMs: 300_000,
  pruneEveryMs: 60_000,
};

/** A full load: every node's rows (those found unchanged replaced by the rows held), the change-log mark read before them, when the read began and ended. */
interface FullLoad {
  rows: NodeRow[];
  mark: bigint;
  startMs: number;
  doneMs: number;
}

/** What one read did: a full load (boot, gap) or the nodes re-read after the change log. */
export interface SnapshotRead {
  nodes: NodeRow[];
  full: boolean;
  /** Nodes re-read from the change log (and marked dirty) in this read. */
  reread: number;
}

/**
 * The worker's cluster snapshot (nodes, GPUs, MIG slices, active allocations), kept in memory
 * and brought up to date each cycle from the cluster change log: the nodes any writer touched
 * (this worker's commits, the other worker's, releases, cordons, persona, power, MIG and
 * health changes) since the last read are read again, whole. Reading a node again is
 * idempotent, so a node named twice costs a read, never a wrong picture.
 *
 * Full loads: the first read, a read after a gap longer than `gapMs` (the log may be pruned
 * past the mark), and every `refreshMs` in the background (installed at the next read, then
 * brought up to date from its own mark). The snapshot is only the engine's guess: the batched
 * commit re-checks every placement under its locks, so a stale node costs a placement conflict
 * (and that node is read again), never a double placement.
 */
export class IncrementalSnapshot {
  private sorted: NodeRow[] = [];
  private index = new Map<string, number>();
  private mark: bigint | null = null;
  private lastReadMs = 0;
  /** When the next background reload is due (nextRefreshAfterMs after the installed load ended). */
  private refreshDueMs = 0;
  private loading?: Promise<void>;
  private loaded?: FullLoad;
  private readonly dirty = new Set<string>();
  private readonly marks: { atMs: number; mark: bigint }[] = [];
  private prunedMs = 0;
  private reading: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly source: SnapshotSource,
    private readonly timing: SnapshotTiming = SNAPSHOT_TIMING,
    private readonly now: () => number = Date.now,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  /**
   * The snapshot brought up to date: every change committed before this call is in it. Reads
   * run one at a time (the cycle and the node manager's planning share the snapshot): a read
   * asked for while another runs starts when it ends.
   */
  read(): Promise<SnapshotRead> {
    const next = this.reading.then(
      () => this.readNow(),
      () => this.readNow(),
    );
    this.reading = next;
    return next;
  }

  private async readNow(): Promise<SnapshotRead> {
    const now = this.now();
    let full = false;
    if (this.loaded) {
      this.install(this.loaded);
      this.loaded = undefined;
      full = true;
    }
    if (this.mark === null || now - this.lastReadMs > this.timing.gapMs) {
      this.install(await this.fullLoad());
      full = true;
    } else if (now > this.refreshDueMs && !this.loading) {
      this.loading = this.fullLoad()
        .then((l) => void (this.loaded = l))
        .catch(this.onError)
        .finally(() => (this.loading = undefined));
    }
    const changes = await this.source.changesSince(this.mark!);
    for (const id of changes.nodeIds) this.dirty.add(id);
    const ids = [...this.dirty];
    if (ids.length) {
      this.apply(ids, await this.source.nodesByIds(ids));
      for (const id of ids) this.dirty.delete(id);
    }
    this.mark = changes.mark;
    this.lastReadMs = now;
    await this.prune(now, changes.mark);
    return { nodes: this.sorted, full, reread: ids.length };
  }

  /** Nodes to read again at the next read whatever the log says (a placement on them conflicted). */
  markDirty(nodeIds: Iterable<string>): void {
    for (const id of nodeIds) this.dirty.add(id);
  }

  /** Resolves once a background reload (if any) has finished (tests, shutdown). */
  async settled(): Promise<void> {
    await this.loading;
  }

  /** Every node, and the mark read before them. */
  private async fullLoad(): Promise<FullLoad> {
    const startMs = this.now();
    // The mark first: whatever commits while the rows are read is named again by the log.
    const mark = await this.source.changeMark();
    const rows = await keepUnchanged(this.sorted, this.index, await this.source.allNodes());
    return { rows, mark, startMs, doneMs: this.now() };
  }

  private install(l: FullLoad): void {
    this.sorted = l.rows.sort(byName);
    this.index = new Map(this.sorted.map((n, i) => [n.id, i]));
    this.mark = l.mark;
    this.refreshDueMs = l.doneMs + nextRefreshAfterMs(l.doneMs - l.startMs, this.timing);
  }

  /** The rows of the nodes `ids` as read again: replaced in place, added, or dropped when gone. */
  private apply(ids: string[], rows: NodeRow[]): void {
    const next = applyNodeRows(this.sorted, this.index, ids, rows);
    this.sorted = next.sorted;
    this.index = next.index;
  }

  /** Change rows below the mark read `retentionMs` ago go: every reader read past them or reloads in full (gapMs). */
  private async prune(now: number, mark: bigint): Promise<void> {
    this.marks.push({ atMs: now, mark });
    if (now - this.prunedMs < this.timing.pruneEveryMs) return;
    let cut = -1;
    for (let i = 0; i < this.marks.length && this.marks[i]!.atMs <= now - this.timing.retentionMs; i++) cut = i;
    if (cut < 0) return;
    const old = this.marks[cut]!;
    this.marks.splice(0, cut + 1);
    this.prunedMs = now;
    await this.source.pruneChanges(old.mark).catch(this.onError);
  }
}

/**
 * Delta application, pure: the nodes `ids` were read again as `rows`. A node read again replaces
 * its row where it stands; a new one is added and one not read back (deleted) is dropped, and
 * then the order (by name) is made again. Returns the new array and index; the input is left as it is.
 */
export function applyNodeRows(
  sorted: readonly NodeRow[],
  index: ReadonlyMap<string, number>,
  ids: readonly string[],
  rows: readonly NodeRow[],
): { sorted: NodeRow[]; index: Map<string, number> } {
  const fresh = new Map(rows.map((r) => [r.id, r]));
  const out = [...sorted];
  let reorder = false;
  for (const id of ids) {
    const at = index.get(id);
    const row = fresh.get(id);
    if (at !== undefined && row && row.name === out[at]!.name) out[at] = row;
    else if (at !== undefined || row) reorder = true;
  }
  if (!reorder) return { sorted: out, index: new Map(index) };
  const byId = new Map(out.map((n) => [n.id, n]));
  for (const id of ids) {
    const row = fresh.get(id);
    if (row) byId.set(id, row);
    else byId.delete(id);
  }
  const next = [...byId.values()].sort(byName);
  return { sorted: next, index: new Map(next.map((n, i) => [n.id, i])) };
}

/** Rows compared between two turns of the event loop (about 10 ms of a worker's loop on this class of machine). */
const COMPARED_PER_TURN = 1_000;

/**
 * The rows of a full load, each replaced by the row already held for its node when the two are
 * equal: what is derived per row object (the node's engine state, its class signature, its MIG
 * facts) is kept for every node the load finds unchanged, instead of derived again for 10,000
 * nodes in the cycle after each reload (0.5-0.8 s of one cycle, measured at 10,000 nodes). The
 * comparison yields the event loop every COMPARED_PER_TURN rows: at 10,000 nodes it is about a
 * tenth of a second of CPU (more on a loaded machine) that a cycle must not wait behind. Equal
 * rows are equal whenever they are compared, so rows replaced meanwhile change nothing.
 */
export async function keepUnchanged(held: readonly NodeRow[], index: ReadonlyMap<string, number>, loaded: readonly NodeRow[]): Promise<NodeRow[]> {
  const out: NodeRow[] = new Array(loaded.length);
  for (let i = 0; i < loaded.length; i++) {
    if (i && i % COMPARED_PER_TURN === 0) await nextTurn();
    const row = loaded[i]!;
    const at = index.get(row.id);
    const old = at === undefined ? undefined : held[at];
    out[i] = old && sameRow(old, row) ? old : row;
  }
  return out;
}

/**
 * How long after a full load ends the next background reload is due: refreshMs, or longer when
 * the load itself was long (timed from its end, so loads never follow each other back to back on
 * a machine so loaded that one outlasts refreshMs), at most maxRefreshMs.
 */
export function nextRefreshAfterMs(loadMs: number, t: Pick<SnapshotTiming, 'refreshMs' | 'refreshShare' | 'maxRefreshMs'>): number {
  return Math.min(t.maxRefreshMs, Math.max(t.refreshMs, loadMs / t.refreshShare));
}

function byName(a: NodeRow, b: NodeRow): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
