import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { RedisService } from '../common/redis.service';
import { QUEUE_NAMES, type QueueName, type QueuePayload } from './queue-names';

/** Schedule requests of one process within this window are sent as one (the first at once, the rest at its end). */
export const SCHEDULE_WINDOW_MS = 20;

/** Starts per `start-many` lifecycle message. */
const START_BATCH = 64;

/** Producer side of the queues: every enqueue is deduplicated so that retries do no harm. */
@Injectable()
export class QueuesService implements OnApplicationShutdown {
  private readonly queues: Map<QueueName, Queue>;
  /** The schedule request in flight or waiting for the end of its window (see requestSchedule). */
  private scheduleWindow?: { trailing?: Promise<void>; reasons: string[] };

  constructor(
    @Inject(APP_CONFIG) readonly config: AppConfig,
    private readonly redis: RedisService,
  ) {
    const connection = { ...config.redis, maxRetriesPerRequest: null };
    this.queues = new Map(QUEUE_NAMES.map((name) => [name, new Queue(name, { connection, prefix: config.queuePrefix })]));
  }

  queue(name: QueueName): Queue {
    return this.queues.get(name)!;
  }

  private get dirtyKey() {
    return `${this.config.queuePrefix}:schedule:dirty`;
  }

  /**
   * Asks for a scheduling cycle. Requests arriving while one waits are merged into it; the
   * dirty flag makes a running cycle go round once more for requests that came meanwhile.
   *
   * Coalesced per process: the first request of a window goes out at once; requests made during
   * the next SCHEDULE_WINDOW_MS are sent as one at its end, after everything they follow was
   * committed, so none is lost and a burst of submissions costs a few Redis round trips, not
   * two per job. Each caller's promise settles once a request covering it has been sent.
   */
  requestSchedule(reason: string): Promise<void> {
    const w = this.scheduleWindow;
    if (w) {
      w.reasons.push(reason);
      w.trailing ??= new Promise<void>((resolve, reject) => {
        setTimeout(() => {
          const reasons = w.reasons.slice(1);
          this.scheduleWindow = undefined;
          this.sendSchedule(reasons.length > 1 ? `${reasons[0]} and ${reasons.length - 1} more` : (reasons[0] ?? reason)).then(resolve, reject);
        }, SCHEDULE_WINDOW_MS);
      });
      return w.trailing;
    }
    this.scheduleWindow = { reasons: [reason] };
    const sent = this.sendSchedule(reason);
    // Without followers within the window, the next request is sent at once again.
    setTimeout(() => {
      if (this.scheduleWindow && !this.scheduleWindow.trailing) this.scheduleWindow = undefined;
    }, SCHEDULE_WINDOW_MS);
    return sent;
  }

  private async sendSchedule(reason: string): Promise<void> {
    await this.redis.client.set(this.dirtyKey, '1');
    await this.queue('schedule').add('cycle', { reason } satisfies QueuePayload<'schedule'>, {
      deduplication: { id: 'schedule-cycle' },
      removeOnComplete: true,
      removeOnFail: 100,
    });
  }

  /** Clears the dirty flag; true when a cycle had been requested since the last call. */
  async takeScheduleRequest(): Promise<boolean> {
    return (await this.redis.client.getset(this.dirtyKey, '0')) === '1';
  }

  /**
   * A failed job kept for inspection (removeOnFail) still owns its id, and BullMQ ignores an
   * add with a taken id: without this, a start that failed its attempts (Postgres restarting,
   * a worker killed twice mid-job) could never be enqueued again, even by the reconciler.
   */
  private async dropFailed(name: QueueName, id: string): Promise<void> {
    const q = this.queue(name);
    const existing = await q.getJob(id);
    if (existing && (await existing.isFailed())) await existing.remove().catch(() => undefined);
  }

  /** Data of the jobs of a queue still to run (waiting, delayed, active): what the reconciler must not duplicate. */
  async liveJobData<Q extends QueueName>(name: Q): Promise<QueuePayload<Q>[]> {
    const jobs = await this.queue(name).getJobs(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);
    return jobs.filter((j) => !!j).map((j) => j.data as QueuePayload<Q>);
  }

  /** One lifecycle action per job and action: a duplicate enqueue is a no-op (a failed earlier one is replaced). */
  async lifecycle(payload: QueuePayload<'lifecycle'>): Promise<void> {
    await this.dropFailed('lifecycle', `${payload.action}-${payload.jobId}`);
    await this.queue('lifecycle').add(payload.action, payload, {
      jobId: `${payload.action}-${payload.jobId}`,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
    });
  }

  /**
   * The starts of one scheduling cycle as one lifecycle message (`start-many`): the worker
   * sends them to the driver together. Keyed by the first job, which a cycle places only once
   * while it is starting; a job lost with the message is started by the reconciler.
   * At most START_BATCH jobs a message.
   */
  async lifecycleStartMany(jobIds: string[]): Promise<void> {
    // Chunks: both workers' lifecycle consumers share a large cycle's starts. Enqueued together
    // (their Redis round trips overlap): one after the other, a 512-placement cycle waited for 16
    // round trips, up to 2 s on a loaded machine.
    const chunks: string[][] = [];
    for (let i = 0; i < jobIds.length; i += START_BATCH) chunks.push(jobIds.slice(i, i + START_BATCH));
    await Promise.all(chunks.map((chunk) => this.lifecycle({ action: 'start-many', jobId: chunk[0]!, jobIds: chunk })));
  }

  /**
   * A MIG change. The job is idempotent (it acts only while the GPU's migTarget is this layout),
   * so each request gets its own id: a failed earlier job kept for inspection never swallows a
   * new request for the same layout.
   */
  async mig(payload: QueuePayload<'mig'>): Promise<void> {
    await this.queue('mig').add('apply', payload, {
      jobId: `mig-${payload.gpuId}-${payload.layout.map((e) => `${e.profile}@${e.start}`).join('+') || 'off'}-${Date.now()}`.replace(/[:]/g, '_'),
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 1000,
      backoff: { type: 'fixed', delay: 1000 },
    });
  }

  /** Node operations (persona switch, cordon, uncordon, drain); idempotent by the node's state checks. */
  async persona(payload: QueuePayload<'persona'>): Promise<void> {
    await this.queue('persona').add(payload.action, payload, {
      jobId: `${payload.action}-${payload.nodeId}-${payload.persona ?? ''}-${Date.now()}`,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 20,
      backoff: { type: 'exponential', delay: 500 },
    });
  }

  /** A power change through the driver; one per node and action (a duplicate while one waits is a no-op). */
  async power(payload: QueuePayload<'power'>): Promise<void> {
    const jobId = `power-${payload.action}-${payload.nodeId}`;
    await this.dropFailed('power', jobId);
    await this.queue('power').add(payload.action, payload, {
      jobId,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    });
  }

  /** Failover work; `dedupId` names the fact (an event at a time, a job lost, an incident step). */
  async failover(payload: QueuePayload<'failover'>, dedupId: string, opts: { delayMs?: number; attempts?: number } = {}): Promise<void> {
    const jobId = dedupId.replace(/[:\s]/g, '_');
    await this.dropFailed('failover', jobId);
    await this.queue('failover').add(payload.action, payload, {
      jobId,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: opts.attempts ?? 8,
      backoff: { type: 'exponential', delay: 250 },
      ...(opts.delayMs ? { delay: opts.delayMs } : {}),
    });
  }

  /** Endpoint work: one start per replica (a duplicate enqueue while one waits is a no-op). */
  async autoscale(payload: QueuePayload<'autoscale'>): Promise<void> {
    if (payload.replicaId) await this.dropFailed('autoscale', `${payload.action}-${payload.replicaId}`);
    await this.queue('autoscale').add(payload.action, payload, {
      ...(payload.replicaId ? { jobId: `${payload.action}-${payload.replicaId}` } : {}),
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 5,
      backoff: { type: 'exponential', delay: 250 },
    });
  }

  /** Bare metal: a tick (coalesced while one waits) or one node's step (one per node and step). */
  async bareMetal(payload: QueuePayload<'bare-metal'>): Promise<void> {
    const jobId = payload.action === 'step' ? `step-${payload.nodeId}-${payload.step}` : 'tick-now';
    if (payload.action === 'step') await this.dropFailed('bare-metal', jobId);
    await this.queue('bare-metal').add(payload.action, payload, {
      jobId,
      removeOnComplete: true,
      removeOnFail: payload.action === 'step' ? 100 : true,
      attempts: payload.action === 'step' ? 10 : 1,
      backoff: { type: 'exponential', delay: 1000 },
    });
  }

  /** A what-if run; one BullMQ job per run (a stalled one is handed out again: the run is claimed again). */
  async planner(runId: string): Promise<void> {
    await this.queue('planner').add('run', { runId } satisfies QueuePayload<'planner'>, {
      jobId: `planner-${runId}`,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 1,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
