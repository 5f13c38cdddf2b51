import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { scopeOf, type Principal, type TenantScope } from '../../common/principal';
import { eventsChannel, type LiveEvent } from './events.publisher';

export interface SseMessage {
  id?: string;
  type?: string;
  data: string | object;
}

const HEARTBEAT_MS = 15_000;

/** Who may see a live event: the platform sees all; a tenant its own events and cluster-wide ones. */
export function visibleTo(scope: TenantScope, e: LiveEvent): boolean {
  return scope.kind === 'platform' || e.tenantId === null || e.tenantId === scope.tenantId;
}

/**
 * api side of the live feed: one Redis subscription per process, fanned out to every open
 * `/v1/events/stream` connection, filtered by the caller's tenant.
 */
@Injectable()
export class EventsStreamService implements OnModuleDestroy {
  private readonly logger = new Logger('events');
  private subscriber?: Redis;
  private readonly listeners = new Set<(e: LiveEvent) => void>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  private async ensureSubscribed(): Promise<void> {
    if (this.subscriber) return;
    const sub = new Redis({ ...this.config.redis, lazyConnect: true, maxRetriesPerRequest: null });
    this.subscriber = sub;
    sub.on('error', (e) => this.logger.warn(`live feed subscription: ${e.message}`));
    sub.on('message', (_channel: string, text: string) => {
      let e: LiveEvent;
      try {
        e = JSON.parse(text) as LiveEvent;
      } catch {
        return;
      }
      for (const l of this.listeners) l(e);
    });
    await sub.connect();
    await sub.subscribe(eventsChannel(this.config.queuePrefix));
  }

  /** The caller's live stream: events as they happen, plus a heartbeat comment-like ping. */
  stream(p: Principal): Observable<SseMessage> {
    const scope = scopeOf(p);
    return new Observable<SseMessage>((sub) => {
      const listener = (e: LiveEvent) => {
        if (visibleTo(scope, e)) sub.next({ id: e.id, type: e.topic, data: e });
      };
      this.listeners.add(listener);
      sub.next({ type: 'ready', data: { at: new Date().toISOString() } });
      this.ensureSubscribed().catch((e: unknown) => sub.error(e));
      const beat = setInterval(() => sub.next({ type: 'ping', data: { at: new Date().toISOString() } }), HEARTBEAT_MS);
      return () => {
        clearInterval(beat);
        this.listeners.delete(listener);
      };
    });
  }

  /** Open connections on this process. */
  get connections(): number {
    return this.listeners.size;
  }

  async onModuleDestroy(): Promise<void> {
    this.listeners.clear();
    this.subscriber?.disconnect();
  }
}
