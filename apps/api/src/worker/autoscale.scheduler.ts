import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { KNATIVE_DEFAULTS } from '../modules/endpoints/autoscaler';
import { QueuesService } from '../queues/queues.service';

/** Registers the repeatable `autoscale` tick (Knative's 2 s; one scheduler shared by every worker). */
@Injectable()
export class AutoscaleScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('autoscaler');

  constructor(private readonly queues: QueuesService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queues
      .queue('autoscale')
      .upsertJobScheduler(
        'autoscale-tick',
        { every: KNATIVE_DEFAULTS.tickSeconds * 1000 },
        { name: 'tick', data: { action: 'tick' }, opts: { removeOnComplete: true, removeOnFail: 50 } },
      );
    this.logger.log(`endpoint autoscaler tick every ${KNATIVE_DEFAULTS.tickSeconds} s`);
  }
}
