import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { QueuesService } from '../queues/queues.service';

/** How often the bare-metal provisioner looks for idle nodes for queued leases and finished steps. */
export const BARE_METAL_TICK_MS = 2_000;

/** Registers the repeatable `bare-metal` tick (one scheduler, shared by every worker). */
@Injectable()
export class BareMetalScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('bare-metal');

  constructor(private readonly queues: QueuesService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queues
      .queue('bare-metal')
      .upsertJobScheduler(
        'bare-metal-tick',
        { every: BARE_METAL_TICK_MS },
        { name: 'tick', data: { action: 'tick' }, opts: { removeOnComplete: true, removeOnFail: 50 } },
      );
    this.logger.log(`bare-metal leases looked at every ${BARE_METAL_TICK_MS / 1000} s`);
  }
}
