import { Injectable } from '@nestjs/common';
import { FailoverService } from '../modules/failover/failover.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `failover`: health events and the steps of the failover loop. */
@Injectable()
export class FailoverProcessor implements QueueProcessor {
  readonly queue = 'failover' as const;
  readonly concurrency = 8;

  constructor(private readonly failover: FailoverService) {}

  process(data: unknown): Promise<void> {
    return this.failover.handle(QUEUES.failover.parse(data));
  }
}
