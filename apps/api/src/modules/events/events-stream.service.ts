import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { scopeOf, type Principal } from '../../common/principal';
import { type TenantScope } from '../../common/tenant-scope';
import { eventsChannel, type LiveEvent } from './events.publisher';
import { decodeFeedMessage } from './feed-message';
import { CredentialRevocations } from '../../common/credential-revocations.service';
import { CredentialCheck } from '../auth/credential-check.service';

export interface SseMessage {
  id?: string;
  type?: string;
  data: string | object;
}

const HEARTBEAT_MS = 15_000;

/**
 * Who may see a live event: the platform sees all; a tenant its own events and cluster-wide
 * ones; a team-bound caller only its team's events (and cluster-wide ones), never a tenant event
 * that belongs to no team it can see.
 */
export function visibleTo(scope: TenantScope, e: LiveEvent): boolean {
  if (scope.kind === 'platform' || e.tenantId === null) return true;
  if (e.tenantId !== scope.tenantId) return false;
  return scope.teamId === null || e.teamId === scope.teamId;
}

/** How often an open stream re-checks its credential (a revocation also ends it at once). */
const RECHECK_MS = 15_000;

/**
 * api side of the live feed: one Redis subscription per process, fanned out to every open
 * `/v1/events/stream` connection, filtered by the caller's tenant.
 */
@Injectable()
export class EventsStreamService implements OnModuleDestroy {
  private readonly logger = new Logger('events');
  private subscriber?: Redis;
  private readonly listeners = new Set<(e: LiveEvent) => void>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly revocations: CredentialRevocations,
    private readonly credentials: CredentialCheck,
  ) {}

  private async ensureSubscribed(): Promise<void> {
    if (this.subscriber) return;
    const sub = new Redis({ ...this.config.redis, lazyConnect: true, maxRetriesPerRequest: null });
    this.subscriber = sub;
    sub.on('error', (e) => this.logger.warn(`live feed subscription: ${e.message}`));
    sub.on('message', (_channel: string, text: string) => {
      if (this.listeners.size === 0) return;
      for (const e of decodeFeedMessage(text)) for (const l of this.listeners) l(e);
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
      // The stream lives only as long as its credential: a revoked key or an ended session closes it.
      const end = (reason: string) => {
        sub.next({ type: 'revoked', data: { reason } });
        sub.complete();
      };
      const stopRevocations = this.revocations.onRevoked((r) => {
        if (CredentialCheck.names(p, r)) end(r.sessionId ? 'this session has ended' : 'this API key was revoked');
      });
      const recheck = setInterval(() => {
        this.credentials.problem(p).then(
          (problem) => problem && end(problem),
          (e: unknown) => this.logger.warn(`re-checking a stream's credential: ${String(e)}`),
        );
      }, RECHECK_MS);
      sub.next({ type: 'ready', data: { at: new Date().toISOString() } });
      this.ensureSubscribed().catch((e: unknown) => sub.error(e));
      const beat = setInterval(() => sub.next({ type: 'ping', data: { at: new Date().toISOString() } }), HEARTBEAT_MS);
      return () => {
        clearInterval(beat);
        clearInterval(recheck);
        stopRevocations();
        this.listeners.delete(listener);
      };
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.listeners.clear();
    this.subscriber?.disconnect();
  }
}
