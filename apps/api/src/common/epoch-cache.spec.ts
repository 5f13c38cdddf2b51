import { EpochCache, type ChangeEpoch } from './change-epoch.service';

describe('EpochCache', () => {
  const setup = () => {
    let counter: string | null = '0';
    const epochs = { current: async () => counter } as unknown as ChangeEpoch;
    let loads = 0;
    const waiting: (() => void)[] = [];
    const load = () =>
      new Promise<{ n: number }>((resolve) => {
        const n = ++loads;
        waiting.push(() => resolve({ n }));
      });
    /** Ends the oldest load still running. */
    const release = () => waiting.shift()!();
    return { cache: new EpochCache<{ n: number }>(epochs, 'teams', 10_000), load, loads: () => loads, release, set: (c: string | null) => (counter = c) };
  };
  const tick = () => new Promise((r) => setImmediate(r));

  it('requests that miss while a load under the same counter runs share it', async () => {
    const t = setup();
    const a = t.cache.get('team-1', t.load);
    const b = t.cache.get('team-1', t.load);
    await tick();
    t.release();
    expect(await Promise.all([a, b])).toEqual([{ n: 1 }, { n: 1 }]);
    expect(t.loads()).toBe(1);
    expect(await t.cache.get('team-1', t.load)).toEqual({ n: 1 });
  });

  it('a request that read a newer counter (a change committed meanwhile) loads on its own', async () => {
    const t = setup();
    const a = t.cache.get('team-1', t.load);
    await tick();
    t.set('1');
    const b = t.cache.get('team-1', t.load);
    await tick();
    expect(t.loads()).toBe(2);
    t.release();
    t.release();
    expect(await a).toEqual({ n: 1 });
    expect(await b).toEqual({ n: 2 });
  });

  it('without the counter (Redis out of reach) every request loads', async () => {
    const t = setup();
    t.set(null);
    const a = t.cache.get('team-1', t.load);
    await tick();
    t.release();
    const b = t.cache.get('team-1', t.load);
    await tick();
    t.release();
    await Promise.all([a, b]);
    expect(t.loads()).toBe(2);
  });
});
