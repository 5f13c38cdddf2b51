import type { NodeRow } from './cluster.repository';
import { IncrementalSnapshot, applyNodeRows, nextRefreshAfterMs, type SnapshotSource, type SnapshotTiming } from './incremental-snapshot';

const node = (id: string, name = id, state = 'ready') => ({ id, name, state, gpus: [] }) as unknown as NodeRow;

/** Postgres as the snapshot sees it: node rows, a change log with transaction ids, and the xmin of "now". */
class FakeCluster implements SnapshotSource {
  rows = new Map<string, NodeRow>();
  log: { xid: bigint; nodeId: string }[] = [];
  xmin = 100n;
  calls = { full: 0, byIds: [] as string[][], since: [] as bigint[], pruned: [] as bigint[] };
  failByIds = false;

  /** A committed write by transaction `xid` (the trigger's row and the row itself). */
  write(xid: bigint, row: NodeRow | { id: string; deleted: true }) {
    if ('deleted' in row) this.rows.delete(row.id);
    else this.rows.set(row.id, row);
    this.log.push({ xid, nodeId: row.id });
  }
  /** Runs while a full load reads (a test moves the clock: a slow load). */
  duringFull = () => undefined as void;
  async allNodes() {
    this.calls.full++;
    this.duringFull();
    return [...this.rows.values()];
  }
  async nodesByIds(ids: string[]) {
    this.calls.byIds.push([...ids].sort());
    if (this.failByIds) throw new Error('connection lost');
    return ids.flatMap((id) => (this.rows.has(id) ? [this.rows.get(id)!] : []));
  }
  async changeMark() {
    return this.xmin;
  }
  async changesSince(mark: bigint) {
    this.calls.since.push(mark);
    return { nodeIds: [...new Set(this.log.filter((c) => c.xid >= mark).map((c) => c.nodeId))], mark: this.xmin };
  }
  async pruneChanges(mark: bigint) {
    this.calls.pruned.push(mark);
    const before = this.log.length;
    this.log = this.log.filter((c) => c.xid >= mark);
    return before - this.log.length;
  }
}

const timing: SnapshotTiming = { refreshMs: 60_000, refreshShare: 0.01, maxRefreshMs: 600_000, gapMs: 240_000, retentionMs: 300_000, pruneEveryMs: 60_000 };

function setup() {
  const db = new FakeCluster();
  for (const n of ['n3', 'n1', 'n2']) db.rows.set(n, node(n));
  let now = 1_000_000;
  const snap = new IncrementalSnapshot(db, timing, () => now);
  return { db, snap, advance: (ms: number) => (now += ms) };
}

const names = (rows: NodeRow[]) => rows.map((n) => `${n.name}:${(n as unknown as { state: string }).state}`);

describe('IncrementalSnapshot', () => {
  it('loads the cluster in full once, then reads again only the nodes the change log names', async () => {
    const { db, snap, advance } = setup();
    const first = await snap.read();
    expect(first.full).toBe(true);
    expect(names(first.nodes)).toEqual(['n1:ready', 'n2:ready', 'n3:ready']);

    db.write(100n, node('n2', 'n2', 'cordoned')); // a cordon through the API, committed
    db.xmin = 102n;
    advance(1000);
    const second = await snap.read();
    expect(second.full).toBe(false);
    expect(second.reread).toBe(1);
    expect(names(second.nodes)).toEqual(['n1:ready', 'n2:cordoned', 'n3:ready']);
    expect(db.calls.full).toBe(1);
    expect(db.calls.byIds).toEqual([['n2']]);

    // the next read starts at the mark of the last one: n2's change (xid 100) is not read again
    advance(1000);
    const third = await snap.read();
    expect(third.reread).toBe(0);
    expect(db.calls.since.at(-1)).toBe(102n);
  });

  it('finds a change committed late by a transaction that was open at the last read (its xid is at or above that mark)', async () => {
    const { db, snap, advance } = setup();
    await snap.read(); // mark 100; transaction 101 is open meanwhile
    db.xmin = 101n;
    advance(1000);
    await snap.read();
    db.write(101n, node('n1', 'n1', 'draining')); // 101 commits now
    db.xmin = 105n;
    advance(1000);
    expect(names((await snap.read()).nodes)).toEqual(['n1:draining', 'n2:ready', 'n3:ready']);
  });

  it('adds a new node and drops a deleted one, keeping the order by name', async () => {
    const { db, snap, advance } = setup();
    await snap.read();
    db.write(100n, node('n0', 'n0'));
    db.write(101n, { id: 'n3', deleted: true });
    db.xmin = 102n;
    advance(1000);
    expect(names((await snap.read()).nodes)).toEqual(['n0:ready', 'n1:ready', 'n2:ready']);
  });

  it('reads a node marked dirty (a placement conflict) again, and keeps what a failed read owes for the next read', async () => {
    const { db, snap, advance } = setup();
    await snap.read();
    db.rows.set('n1', node('n1', 'n1', 'cordoned')); // changed without a log row (a missed delta)
    snap.markDirty(['n1']);
    db.failByIds = true;
    db.xmin = 103n;
    advance(1000);
    await expect(snap.read()).rejects.toThrow('connection lost');
    db.failByIds = false;
    db.write(101n, node('n2', 'n2', 'cordoned'));
    db.xmin = 110n;
    advance(1000);
    const r = await snap.read();
    expect(names(r.nodes)).toEqual(['n1:cordoned', 'n2:cordoned', 'n3:ready']);
    expect(db.calls.since).toEqual([100n, 100n, 100n]); // the failed read did not move the mark
  });

  it('loads in full again after a gap longer than gapMs (the log may have been pruned past the mark)', async () => {
    const { db, snap, advance } = setup();
    await snap.read();
    db.rows.set('n2', node('n2', 'n2', 'cordoned')); // its log row pruned meanwhile
    advance(timing.gapMs + 1);
    const r = await snap.read();
    expect(r.full).toBe(true);
    expect(db.calls.full).toBe(2);
    expect(names(r.nodes)).toContain('n2:cordoned');
  });

  it('reloads in the background every refreshMs, installs the load at the next read and catches up from the load’s own mark', async () => {
    const { db, snap, advance } = setup();
    await snap.read();
    db.rows.set('n3', node('n3', 'n3', 'cordoned')); // a change no trigger saw
    advance(timing.refreshMs + 1);
    db.xmin = 110n;
    const during = await snap.read(); // starts the reload, answers from memory
    expect(during.full).toBe(false);
    expect(names(during.nodes)).toContain('n3:ready');
    await snap.settled();
    db.write(112n, node('n1', 'n1', 'draining'));
    db.xmin = 120n;
    advance(1000);
    const after = await snap.read();
    expect(after.full).toBe(true);
    expect(names(after.nodes)).toEqual(['n1:draining', 'n2:ready', 'n3:cordoned']);
    expect(db.calls.since.at(-1)).toBe(110n); // from the reload's mark, not the later read's
    expect(db.calls.full).toBe(2);
  });

  it('keeps the row it holds for every node a reload finds unchanged (what was derived from it stays valid)', async () => {
    const { db, snap, advance } = setup();
    const before = (await snap.read()).nodes;
    // a full load reads new row objects: equal ones for n1 and n2, a change no trigger saw on n3
    db.allNodes = async () => [...db.rows.values()].map((r) => (r.id === 'n3' ? node('n3', 'n3', 'cordoned') : (JSON.parse(JSON.stringify(r)) as NodeRow)));
    advance(timing.refreshMs + 1);
    await snap.read();
    await snap.settled();
    const after = (await snap.read()).nodes;
    expect(names(after)).toEqual(['n1:ready', 'n2:ready', 'n3:cordoned']);
    expect(after[0]).toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    expect(after[2]).not.toBe(before[2]);
  });

  it('times the next background reload from the end of the last one, later after a long load: reloads take about refreshShare of the time', async () => {
    const { db, snap, advance } = setup();
    await snap.read();
    advance(timing.refreshMs + 1);
    const loadMs = 2_000; // 10,000 nodes on a busy worker
    db.duringFull = () => void advance(loadMs);
    await snap.read(); // starts the reload
    await snap.settled();
    db.duringFull = () => undefined;
    expect(db.calls.full).toBe(2);
    const installed = await snap.read();
    expect(installed.full).toBe(true);
    advance(timing.refreshMs + 1);
    await snap.read();
    await snap.settled();
    expect(db.calls.full).toBe(2); // not after refreshMs: 2 s of reload every minute is 3% of the worker
    advance(loadMs / timing.refreshShare - timing.refreshMs);
    await snap.read();
    await snap.settled();
    expect(db.calls.full).toBe(3); // 200 s after the 2 s load ended
  });

  it('spaces reloads refreshMs apart when they are quick, never more than maxRefreshMs when they are slow', () => {
    expect(nextRefreshAfterMs(20, timing)).toBe(timing.refreshMs);
    expect(nextRefreshAfterMs(2_000, timing)).toBe(200_000);
    expect(nextRefreshAfterMs(timing.refreshMs * 2, timing)).toBe(timing.maxRefreshMs); // a load that outlasts refreshMs is not followed at once
  });

  it('prunes only change rows below the mark read retentionMs ago', async () => {
    const { db, snap, advance } = setup();
    await snap.read(); // t0, mark 100
    db.write(100n, node('n1'));
    db.xmin = 150n;
    advance(timing.retentionMs / 2);
    await snap.read(); // mark 150
    expect(db.calls.pruned).toEqual([]);
    db.write(150n, node('n2'));
    db.xmin = 200n;
    advance(timing.retentionMs / 2);
    await snap.read(); // t0 + retention: the mark read at t0 (100) may go, not the later ones
    expect(db.calls.pruned).toEqual([100n]);
    advance(timing.retentionMs / 2 + 1);
    await snap.read();
    expect(db.calls.pruned).toEqual([100n, 150n]);
    expect(db.log.map((c) => c.xid)).toEqual([150n]);
  });
});

describe('applyNodeRows', () => {
  const start = [node('a'), node('b'), node('c')];
  const index = new Map(start.map((n, i) => [n.id, i]));

  it('replaces a node read again where it stands, leaving the input as it was', () => {
    const b2 = node('b', 'b', 'cordoned');
    const out = applyNodeRows(start, index, ['b'], [b2]);
    expect(out.sorted).toEqual([start[0], b2, start[2]]);
    expect(start[1]).not.toBe(b2);
  });

  it('drops a node named but not read back, adds a new one in name order, and indexes the result', () => {
    const out = applyNodeRows(start, index, ['b', 'ab'], [node('ab')]);
    expect(out.sorted.map((n) => n.id)).toEqual(['a', 'ab', 'c']);
    expect(out.index).toEqual(
      new Map([
        ['a', 0],
        ['ab', 1],
        ['c', 2],
      ]),
    );
  });

  it('moves a renamed node to its new place', () => {
    const out = applyNodeRows(start, index, ['a'], [node('a', 'z')]);
    expect(out.sorted.map((n) => n.name)).toEqual(['b', 'c', 'z']);
  });
});
