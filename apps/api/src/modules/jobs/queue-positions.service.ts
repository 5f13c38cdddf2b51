import { Injectable, Logger } from '@nestjs/common';
import type { TenantScope } from '../../common/tenant-scope';
import { FairShareService } from '../fair-share/fair-share.service';
import { JobsRepository, type JobRow, type QueueHistory } from './jobs.repository';
import { QueueOrderMemo, type QueuedJob } from './queue-order.memo';

/** A list's queue positions may be this old before a new ordering starts behind the answer. */
const FRESH_MS = 1_000;
/** Older than this, a list waits for a new ordering. */
const STALE_MS = 30_000;
/** How many queued ids the head of the queue looks through per read, and at most. */
const HEAD_READ = 200;
const HEAD_SCAN = 2_000;

/**
 * Queue positions as the scheduling cycle orders the queue (priority, then each team's weighted
 * dominant share with its decayed history, then age) within the caller's tenant, the whole
 * cluster's for the platform. Orderings are shared between requests (see QueueOrderMemo).
 */
@Injectable()
export class QueuePositions {
  private readonly logger = new Logger('queue-positions');
  private readonly memo = new QueueOrderMemo(FRESH_MS, STALE_MS, 1_000, (e) => this.logger.warn(`could not order the queue: ${String(e)}`));

  constructor(
    private readonly jobs: JobsRepository,
    private readonly fairShare: FairShareService,
  ) {}

  /** Positions of the pending jobs of a page (a job newer than the last ordering has none yet). */
  async ofPage(scope: TenantScope, rows: { id: string; state: string }[]): Promise<Map<string, number>> {
    const pending = rows.filter((r) => r.state === 'pending');
    if (pending.length === 0) return new Map();
    const key = keyOf(scope);
    const order = await this.memo.forList(key, this.loader(scope));
    if (pending.some((r) => !order.position.has(r.id))) this.memo.behind(key, this.loader(scope));
    return order.position;
  }

  /** Position of one job when pending, from an ordering that began after `since` if the last one is stale or lacks it. */
  async ofJob(scope: TenantScope, row: { id: string; state: string }, since = Date.now()): Promise<number | undefined> {
    if (row.state !== 'pending') return undefined;
    return (await this.memo.including(keyOf(scope), row.id, this.loader(scope), since)).position.get(row.id);
  }

  /**
   * The first `size` pending jobs in queue order, each with its position. The whole tenant's (or
   * cluster's) head is ordered afresh from each team's oldest jobs alone; one team's is taken from
   * the shared ordering (its positions count the other teams' jobs ahead of it).
   */
  async head(scope: TenantScope, size: number, teamId?: string): Promise<{ row: JobRow; position: number }[]> {
    const team = teamId ?? (scope.kind === 'tenant' ? scope.teamId : null);
    if (!team) {
      return (await this.jobs.queueHead(scope, size, this.history(scope))).map((row, i) => ({ row, position: i + 1 }));
    }
    const order = await this.memo.forList(keyOf(scope), this.loader(scope));
    const queued = order.jobs.filter((j) => j.teamId === team).slice(0, HEAD_SCAN);
    const out: { row: JobRow; position: number }[] = [];
    // Jobs placed since the ordering are no longer pending: read on until `size` still are.
    for (let i = 0; i < queued.length && out.length < size; i += HEAD_READ) {
      const ids = queued.slice(i, i + HEAD_READ).map((j) => j.id);
      const rows = new Map((await this.jobs.stillPending(scope, ids)).map((r) => [r.id, r]));
      for (const id of ids) {
        const row = rows.get(id);
        if (row && out.length < size) out.push({ row, position: order.position.get(id)! });
      }
    }
    return out;
  }

  /** Reads the whole tenant's queue whoever asks (a team-bound key's positions are in its tenant's queue too). */
  private loader(caller: TenantScope): () => Promise<QueuedJob[]> {
    const scope: TenantScope = caller.kind === 'platform' ? caller : { kind: 'tenant', tenantId: caller.tenantId, teamId: null };
    return async () => (await this.jobs.pendingQueue(scope, await this.history(scope))).map((j) => ({ id: j.id, teamId: j.teamId }));
  }

  private async history(scope: TenantScope): Promise<QueueHistory> {
    return { gpus: await this.fairShare.historyGpus(scope), weight: this.fairShare.params.historyWeight };
  }
}

/** Queue positions are within the tenant's queue (a team-bound key too), the cluster's for the platform. */
const keyOf = (scope: TenantScope) => (scope.kind === 'platform' ? 'platform' : `tenant:${scope.tenantId}`);
