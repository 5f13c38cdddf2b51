import type { LiveEvent } from '@gantry/contracts';
import { decodeFeedMessage, encodeFeedMessage } from './feed-message';

const event = (id: string): LiveEvent => ({
  id,
  topic: 'job',
  type: 'job.submitted',
  tenantId: 't1',
  teamId: 'team1',
  jobId: `job-${id}`,
  nodeId: null,
  message: 'submitted 1 replica(s)',
  at: '2026-12-04T19:00:00.000Z',
});

describe('live feed messages', () => {
  it('carry a batch of events that a subscriber reads back in order', () => {
    const batch = [event('a'), event('b'), event('c')];
    expect(decodeFeedMessage(encodeFeedMessage(batch))).toEqual(batch);
  });

  it('read a lone event, as a publisher from before batching sent it, as one event', () => {
    expect(decodeFeedMessage(JSON.stringify(event('a')))).toEqual([event('a')]);
  });

  it('read nothing from a message that is not JSON or holds no events', () => {
    expect(decodeFeedMessage('not json')).toEqual([]);
    expect(decodeFeedMessage('42')).toEqual([]);
    expect(decodeFeedMessage('[null, {"no":"id"}]')).toEqual([]);
  });
});
