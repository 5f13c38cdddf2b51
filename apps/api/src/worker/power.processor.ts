import { Injectable } from '@nestjs/common';
import { PowerService } from '../modules/node-manager/power.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `power`: power a node off or on through the driver (docs/power.md). */
@Injectable()
export class PowerProcessor implements QueueProcessor {
  readonly queue = 'power' as const;
  readonly concurrency = 16;

  constructor(private readonly power: PowerService) {}

  process(data: unknown): Promise<void> {
    return this.power.handle(QUEUES.power.parse(data));
  }
}
