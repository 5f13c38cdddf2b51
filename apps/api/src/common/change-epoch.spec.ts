import type { AppConfig } from '../config/config';
import { ChangeEpoch } from './change-epoch.service';
import type { RedisService } from './redis.service';

/** A Redis holding the counters; each MGET is answered on the next turn, as over a socket, and counted. */
function fakeRedis() {
  const values = new Map<string, string>();
  let reads = 0;
  const client = {
    mget: (...keys: string[]) => {
      reads++;
      const answer = keys.map((k) => values.get(k) ?? null); // read when it reaches Redis: now
      return new Promise((resolve) => setImmediate(() => resolve(answer)));
    },
    incr: async (key: string) => values.set(key, String(Number(values.get(key) ?? 0) + 1)),
  };
  return { redis: { client } as unknown as RedisService, reads: () => reads };
}

describe('ChangeEpoch', () => {
  const setup = () => {
    const fake = fakeRedis();
    const epochs = new ChangeEpoch(fake.redis, { queuePrefix: 'test' } as AppConfig);
    return { epochs, reads: fake.reads };
  };

  it('reads every counter in one MGET; without a request start, every call reads anew', async () => {
    const { epochs, reads } = setup();
    await epochs.changed('teams');
    expect(await epochs.current('teams')).toBe('1');
    expect(await epochs.current('api-keys')).toBe('0');
    expect(reads()).toBe(2);
  });

  it("a request uses a read sent after it began (its own for its key, then for its team; another request's)", async () => {
    const { epochs, reads } = setup();
    const began = performance.now();
    const [key, team] = await Promise.all([epochs.current('api-keys', began), epochs.current('teams', began)]);
    expect([key, team]).toEqual(['0', '0']);
    expect(await epochs.current('teams', began)).toBe('0');
    expect(reads()).toBe(1);
  });

  it('a change announced before a request began is seen by it: a read sent before then is not used', async () => {
    const { epochs, reads } = setup();
    expect(await epochs.current('api-keys', performance.now())).toBe('0'); // an earlier request's read
    await epochs.changed('api-keys'); // a key revoked and announced
    const began = performance.now();
    expect(await epochs.current('api-keys', began)).toBe('1');
    expect(reads()).toBe(2);
  });

  it('when Redis cannot answer, the counter is null (nothing cached is trusted) for every request sharing the read', async () => {
    const { epochs } = setup();
    const failing = new ChangeEpoch(
      { client: { mget: () => Promise.reject(new Error('down')) } } as unknown as RedisService,
      {
        queuePrefix: 'test',
      } as AppConfig,
    );
    const began = performance.now();
    expect(await Promise.all([failing.current('api-keys', began), failing.current('teams', began)])).toEqual([null, null]);
    expect(await epochs.current('teams')).toBe('0');
  });
});
