import { Injectable } from '@nestjs/common';
import { ReservationHoldsService } from '../modules/reservations/reservation-holds.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `reservations` (repeatable): a window that opened or closed asks for a scheduling cycle. */
@Injectable()
export class ReservationsProcessor implements QueueProcessor {
  readonly queue = 'reservations' as const;
  readonly concurrency = 1;

  constructor(private readonly holds: ReservationHoldsService) {}

  async process(data: unknown): Promise<{ boundaries: number }> {
    QUEUES.reservations.parse(data);
    return this.holds.tick();
  }
}
