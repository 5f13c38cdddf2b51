import { QueueOrderMemo, type QueuedJob } from './queue-order.memo';

/** A loader whose orderings the test finishes by hand, counting how many were asked for. */
function loader() {
  const calls: { resolve: (jobs: QueuedJob[]) => void; reject: (e: unknown) => void }[] = [];
  const load = () => new Promise<QueuedJob[]>((resolve, reject) => calls.push({ resolve, reject }));
  return { load, calls };
}
const jobs = (...ids: string[]) => ids.map((id) => ({ id, teamId: 't' }));
const tick = () => new Promise((r) => setImmediate(r));

describe('QueueOrderMemo', () => {
  it('orders once for the requests arriving together and for those within freshMs', async () => {
    const memo = new QueueOrderMemo(1_000, 30_000);
    const { load, calls } = loader();
    const a = memo.forList('t1', load, 0);
    const b = memo.forList('t1', load, 10);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(jobs('j1', 'j2'));
    expect((await a).position.get('j2')).toBe(2);
    expect(await b).toBe(await a);
    expect((await memo.forList('t1', load, 900)).position.get('j1')).toBe(1);
    expect(calls).toHaveLength(1);
  });

  it('answers a stale order at once while a new one is made behind it, and waits only when it is too old', async () => {
    const memo = new QueueOrderMemo(1_000, 30_000);
    const { load, calls } = loader();
    const first = memo.forList('t1', load, 0);
    calls[0]!.resolve(jobs('j1'));
    await first;
    const stale = await memo.forList('t1', load, 2_000);
    expect(stale.jobs.map((j) => j.id)).toEqual(['j1']);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(jobs('j2', 'j1'));
    await tick();
    expect((await memo.forList('t1', load, 2_500)).position.get('j1')).toBe(2);
    // Much later: the caller waits for a new ordering rather than taking one 30 s old.
    let answered = false;
    const late = memo.forList('t1', load, 40_000).then((o) => ((answered = true), o));
    await tick();
    expect(answered).toBe(false);
    calls[2]!.resolve(jobs('j3'));
    expect((await late).jobs.map((j) => j.id)).toEqual(['j3']);
  });

  it("gives one job's position from an ordering begun after its request when the last one lacks it", async () => {
    const memo = new QueueOrderMemo(1_000, 30_000);
    const { load, calls } = loader();
    const first = memo.forList('t1', load, 0);
    // A request at 100 for a job the ordering begun at 0 may not hold: it does not join that ordering.
    const mine = memo.including('t1', 'new', load, 100);
    expect(calls).toHaveLength(2);
    calls[0]!.resolve(jobs('j1'));
    calls[1]!.resolve(jobs('j1', 'new'));
    await first;
    expect((await mine).position.get('new')).toBe(2);
    // Fresh and holding it: no new ordering.
    expect((await memo.including('t1', 'new', load, 500)).position.get('new')).toBe(2);
    expect(calls).toHaveLength(2);
  });

  it('keeps the newer ordering when an older one finishes after it, and each queue apart', async () => {
    const memo = new QueueOrderMemo(1_000, 30_000);
    const { load, calls } = loader();
    const older = memo.forList('t1', load, 0);
    const newer = memo.including('t1', 'x', load, 50);
    calls[1]!.resolve(jobs('x'));
    await newer;
    calls[0]!.resolve(jobs('old'));
    await older;
    expect((await memo.forList('t1', load, 60)).jobs.map((j) => j.id)).toEqual(['x']);
    const other = memo.forList('t2', load, 60);
    expect(calls).toHaveLength(3);
    calls[2]!.resolve(jobs('y'));
    expect((await other).jobs.map((j) => j.id)).toEqual(['y']);
  });

  it('reports a failed background ordering without failing the answer, and tries again on the next request', async () => {
    const errors: unknown[] = [];
    const memo = new QueueOrderMemo(1_000, 30_000, 10, (e) => errors.push(e));
    const { load, calls } = loader();
    const first = memo.forList('t1', load, 0);
    calls[0]!.resolve(jobs('j1'));
    await first;
    expect((await memo.forList('t1', load, 2_000)).jobs.map((j) => j.id)).toEqual(['j1']);
    calls[1]!.reject(new Error('database gone'));
    await tick();
    expect(errors).toHaveLength(1);
    await memo.forList('t1', load, 2_100);
    expect(calls).toHaveLength(3);
  });

  it('asks for an ordering behind the answer when a page shows a job newer than the order, once', async () => {
    const memo = new QueueOrderMemo(1_000, 30_000);
    const { load, calls } = loader();
    const first = memo.forList('t1', load, 0);
    calls[0]!.resolve(jobs('j1'));
    await first;
    memo.behind('t1', load, 100);
    memo.behind('t1', load, 150);
    expect(calls).toHaveLength(1 + 1);
  });
});
