import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { QueuesService } from '../queues/queues.service';

/** Registers the repeatable `reservations` tick (one scheduler, shared by every worker). */
@Injectable()
export class ReservationsScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('reservations');

  constructor(
    private readonly queues: QueuesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const every = Math.round(this.config.reservations.tickSeconds * 1000);
    await this.queues
      .queue('reservations')
      .upsertJobScheduler('reservations-tick', { every }, { name: 'tick', data: {}, opts: { removeOnComplete: true, removeOnFail: 50 } });
    this.logger.log(`reservation windows checked every ${every / 1000} s`);
  }
}
