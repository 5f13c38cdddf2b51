import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { QueuesService } from '../queues/queues.service';

/** Registers the repeatable `telemetry` tick (one scheduler, shared by every worker). */
@Injectable()
export class TelemetryScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('telemetry');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly queues: QueuesService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const every = this.config.telemetry.intervalSeconds * 1000;
    await this.queues
      .queue('telemetry')
      .upsertJobScheduler('telemetry-tick', { every }, { name: 'tick', data: {}, opts: { removeOnComplete: true, removeOnFail: 50 } });
    this.logger.log(`sampling GPU metrics every ${this.config.telemetry.intervalSeconds} s`);
  }
}
