import { Injectable } from '@nestjs/common';
import { MigManagerService } from '../modules/node-manager/mig-manager.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `mig`: apply a MIG layout to one GPU. */
@Injectable()
export class MigProcessor implements QueueProcessor {
  readonly queue = 'mig' as const;
  readonly concurrency = 8;

  constructor(private readonly mig: MigManagerService) {}

  process(data: unknown): Promise<void> {
    return this.mig.apply(QUEUES.mig.parse(data));
  }
}
