import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { RedisService } from '../common/redis.service';
import { QUEUE_NAMES, type QueueName, type QueuePayload } from './queue-names';

/** Producer side of the queues: every enqueue is deduplicated so that retries do no harm. */
@Injectable()
export class QueuesService implements OnModuleDestroy {
  private readonly queues: Map<QueueName, Queue>;

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
   */
  async requestSchedule(reason: string): Promise<void> {
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

  /** One lifecycle action per job and action: a duplicate enqueue is a no-op. */
  async lifecycle(payload: QueuePayload<'lifecycle'>): Promise<void> {
    await this.queue('lifecycle').add(payload.action, payload, {
      jobId: `${payload.action}-${payload.jobId}`,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
    });
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
