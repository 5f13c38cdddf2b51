import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Worker } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { QUEUE_NAMES } from './queue-names';
import { QUEUE_PROCESSORS, type QueueProcessor } from './processor';

/**
 * Consumer side: one BullMQ worker per queue. Boot fails when a queue has no processor or
 * two, so that no queue silently fills up.
 */
@Injectable()
export class WorkerHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('worker');
  private workers: Worker[] = [];

  constructor(
    @Inject(QUEUE_PROCESSORS) private readonly processors: QueueProcessor[],
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    checkProcessors(this.processors);
    const connection = { ...this.config.redis, maxRetriesPerRequest: null };
    this.workers = this.processors.map((p) => {
      const w = new Worker(p.queue, (job) => p.process(job.data), {
        connection,
        prefix: this.config.queuePrefix,
        concurrency: p.concurrency,
      });
      w.on('failed', (job, err) => this.logger.warn(`${p.queue} ${job?.name ?? ''} ${job?.id ?? ''} failed: ${err.message}`));
      w.on('error', (err) => this.logger.error(`${p.queue}: ${err.message}`));
      return w;
    });
    this.logger.log(`consuming ${this.processors.map((p) => p.queue).join(', ')}`);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}

export function checkProcessors(processors: QueueProcessor[]): void {
  for (const name of QUEUE_NAMES) {
    const n = processors.filter((p) => p.queue === name).length;
    if (n !== 1) throw new Error(`queue "${name}" has ${n} processors; exactly one is required`);
  }
}
