import { Injectable } from '@nestjs/common';
import { LifecycleService } from '../modules/lifecycle/lifecycle.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `lifecycle`: start, stop, suspend or finish a job through the driver. */
@Injectable()
export class LifecycleProcessor implements QueueProcessor {
  readonly queue = 'lifecycle' as const;
  readonly concurrency = 8;

  constructor(private readonly lifecycle: LifecycleService) {}

  async process(data: unknown): Promise<void> {
    const p = QUEUES.lifecycle.parse(data);
    switch (p.action) {
      case 'start':
        return this.lifecycle.start(p.jobId);
      case 'start-many':
        return this.lifecycle.startMany(p.jobIds ?? [p.jobId]);
      case 'stop':
        return this.lifecycle.stop(p.jobId);
      case 'suspend':
        return this.lifecycle.suspend(p.jobId);
      case 'exited':
        return this.lifecycle.exited(p.jobId, p.exitCode ?? 0);
      default: {
        const never: never = p.action;
        throw new Error(`unknown lifecycle action ${String(never)}`);
      }
    }
  }
}
