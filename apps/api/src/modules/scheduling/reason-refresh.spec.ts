import { ReasonRefresh } from './reason-refresh';

const fit = (n: number) => [{ code: 'insufficient_resources', message: `needs 4 x H100-80GB: ${n} of 64 nodes fit` }];
const quota = [{ code: 'quota_limit', message: 'team quota for all GPU models: 96 of 96 in use; this job needs 4' }];

describe('ReasonRefresh', () => {
  it('writes a new cause at once and moved figures at most every refresh period', () => {
    const r = new ReasonRefresh(5000);
    const stored = new Map<string, unknown>([['a', fit(3)]]);
    const read = (id: string) => stored.get(id);
    // first sight of a change of figures: written (no write of its own yet)
    expect(r.due([{ jobId: 'a', reasons: fit(5) }], read, 1000).map((u) => u.jobId)).toEqual(['a']);
    r.written(['a'], ['a'], 1000);
    stored.set('a', fit(5));
    // the figures move again within the period: kept back
    expect(r.due([{ jobId: 'a', reasons: fit(7) }], read, 3000)).toEqual([]);
    // ... but another cause is written at once
    expect(r.due([{ jobId: 'a', reasons: quota }], read, 3000).map((u) => u.jobId)).toEqual(['a']);
    // ... and the moved figures once the period has passed
    expect(r.due([{ jobId: 'a', reasons: fit(7) }], read, 6000).map((u) => u.jobId)).toEqual(['a']);
    // unchanged reasons are never written
    expect(r.due([{ jobId: 'a', reasons: fit(5) }], read, 60_000)).toEqual([]);
  });

  it('writes reasons of a job it never explained, and forgets jobs that left the queue', () => {
    const r = new ReasonRefresh(5000);
    const read = () => undefined;
    expect(r.due([{ jobId: 'b', reasons: fit(1) }], read, 0)).toHaveLength(1);
    r.written(['b'], ['b'], 0);
    const stored = (id: string) => (id === 'b' ? fit(1) : undefined);
    expect(r.due([{ jobId: 'b', reasons: fit(2) }], stored, 100)).toEqual([]);
    r.written([], [], 200); // b is no longer pending
    expect(r.due([{ jobId: 'b', reasons: fit(2) }], stored, 300)).toHaveLength(1);
  });
});
