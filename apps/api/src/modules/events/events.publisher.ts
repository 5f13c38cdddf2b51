import { Inject, Injectable, Logger, OnApplicationBootstrap, BeforeApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { RedisService } from '../../common/redis.service';
import type { LiveEvent } from '@gantry/contracts';
import { EventsFeedRepository, type FeedEvent } from './events-feed.repository';
import { encodeFeedMessage, FEED_MESSAGE_EVENTS } from './feed-message';

/** Redis channel of the live feed; every api process subscribes and fans out to its SSE clients. */
export const eventsChannel = (prefix: string) => `${prefix}:events`;

/** What a live-feed message carries (the contracts' type). `topic` lets the console refresh the right views. */
export type { LiveEvent } from '@gantry/contracts';

const POLL_MS = 1000;
/** Events may commit out of creation order: re-read this far back, skip what was sent. */
const OVERLAP_MS = 5000;
const LEASE_MS = 5000;
/** Events read per query; a poll reads pages until the log is caught up (or MAX_PAGES, then the next poll goes on). */
export const FEED_PAGE = 500;
const MAX_PAGES = 200;

export function topicOf(type: string): LiveEvent['topic'] {
  const head = type.split('.')[0];
  return head === 'job' || head === 'node' || head === 'incident' ? head : 'other';
}

/**
 * Worker side of the live feed: tails the Event table and publishes each new event on Redis.
 * One publisher at a time (a Redis lease), so several workers do not publish twice.
 */
@Injectable()
export class EventsPublisher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('events');
  private timer?: NodeJS.Timeout;
  private cursor = new Date();
  private readonly sent = new Map<string, number>();
  private readonly owner = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  private busy = false;

  constructor(
    private readonly repo: EventsFeedRepository,
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }

  /** One poll: returns the events published. */
  async poll(now = Date.now()): Promise<number> {
    if (this.busy) return 0;
    this.busy = true;
    try {
      const lease = `${this.config.queuePrefix}:events:publisher`;
      const r = this.redis.client;
      const held = (await r.set(lease, this.owner, 'PX', LEASE_MS, 'NX')) === 'OK' || (await r.get(lease)) === this.owner;
      if (!held) return 0;
      await r.pexpire(lease, LEASE_MS);
      // Page through everything since the overlap window (a burst of thousands of events in a
      // second must not pin the feed to its first page: it would never reach newer events).
      let n = 0;
      let after: { createdAt: Date; id?: string } = { createdAt: new Date(this.cursor.getTime() - OVERLAP_MS) };
      for (let page = 0; page < MAX_PAGES; page++) {
        // the page's keys, then the whole rows of the events not sent yet
        const rows = await this.repo.keysSince(after, FEED_PAGE);
        const unsent: string[] = [];
        for (const e of rows) {
          if (e.createdAt > this.cursor) this.cursor = e.createdAt;
          if (!this.sent.has(e.id)) unsent.push(e.id);
        }
        const fresh: LiveEvent[] = (await this.repo.byIds(unsent)).map(toLive);
        for (let i = 0; i < fresh.length; i += FEED_MESSAGE_EVENTS) {
          const batch = fresh.slice(i, i + FEED_MESSAGE_EVENTS);
          await r.publish(eventsChannel(this.config.queuePrefix), encodeFeedMessage(batch));
          for (const e of batch) this.sent.set(e.id, now);
          n += batch.length;
        }
        if (rows.length < FEED_PAGE) break;
        const last = rows[rows.length - 1]!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      for (const [id, t] of this.sent) if (now - t > OVERLAP_MS * 4) this.sent.delete(id);
      return n;
    } catch (e) {
      this.logger.warn(`live feed: ${e instanceof Error ? e.message : String(e)}`);
      return 0;
    } finally {
      this.busy = false;
    }
  }
}

export function toLive(e: FeedEvent): LiveEvent {
  return {
    id: e.id,
    topic: topicOf(e.type),
    type: e.type,
    tenantId: e.tenantId,
    teamId: e.job?.teamId ?? e.bareMetalLease?.teamId ?? null,
    jobId: e.jobId,
    nodeId: e.nodeId,
    message: e.message,
    at: e.createdAt.toISOString(),
  };
}
