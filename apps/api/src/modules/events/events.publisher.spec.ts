import type { FeedEvent } from './events-feed.repository';
import { EventsPublisher } from './events.publisher';
import { decodeFeedMessage } from './feed-message';

/** The live feed's publisher: the last seconds of the log read again each poll, each event published once. */
describe('EventsPublisher', () => {
  const t0 = Date.now();
  const event = (id: string, ms: number): FeedEvent => ({
    id,
    tenantId: 't1',
    jobId: null,
    nodeId: null,
    type: 'job.started',
    message: id,
    createdAt: new Date(t0 + ms),
    job: null,
    bareMetalLease: null,
  });

  function setup() {
    const log: FeedEvent[] = [];
    const fetched: string[][] = [];
    const inOrder = (a: FeedEvent, b: FeedEvent) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1);
    const repo = {
      keysSince: async (after: { createdAt: Date }, limit: number) =>
        log
          .filter((e) => e.createdAt > after.createdAt)
          .sort(inOrder)
          .slice(0, limit)
          .map((e) => ({ id: e.id, createdAt: e.createdAt })),
      byIds: async (ids: readonly string[]) => {
        fetched.push([...ids]);
        return log.filter((e) => ids.includes(e.id)).sort(inOrder);
      },
    };
    const published: string[] = [];
    const client = {
      set: async () => 'OK',
      get: async () => null,
      pexpire: async () => 1,
      publish: async (_channel: string, message: string) => published.push(...decodeFeedMessage(message).map((e) => e.id)),
    };
    const publisher = new EventsPublisher(repo as never, { client } as never, { queuePrefix: 'test' } as never);
    return { log, fetched, published, publisher };
  }

  it('publishes an event committed late (inside the overlap) once, and reads whole rows only of events not sent yet', async () => {
    const { log, fetched, published, publisher } = setup();
    log.push(event('a', 100), event('b', 200));
    expect(await publisher.poll(t0 + 300)).toBe(2);
    // c commits late, with a creation time before b's: the next poll reads the last seconds again
    log.push(event('c', 150), event('d', 400));
    expect(await publisher.poll(t0 + 500)).toBe(2);
    expect(published).toEqual(['a', 'b', 'c', 'd']);
    expect(fetched).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    // nothing new: nothing published, no row read whole
    expect(await publisher.poll(t0 + 600)).toBe(0);
    expect(fetched.at(-1)).toEqual([]);
  });
});
