import { Injectable } from '@nestjs/common';
import { AutoscalerService } from '../modules/endpoints/autoscaler.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `autoscale`: the repeatable endpoint tick, and the start of a placed endpoint replica. */
@Injectable()
export class AutoscaleProcessor implements QueueProcessor {
  readonly queue = 'autoscale' as const;
  /** Starts wait for the model load: several run side by side. */
  readonly concurrency = 8;

  constructor(private readonly autoscaler: AutoscalerService) {}

  async process(data: unknown): Promise<unknown> {
    const p = QUEUES.autoscale.parse(data);
    if (p.action === 'tick') return this.autoscaler.tick();
    if (!p.replicaId) throw new Error('autoscale start needs replicaId');
    return this.autoscaler.start(p.replicaId);
  }
}
