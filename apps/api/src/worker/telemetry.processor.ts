import { Injectable } from '@nestjs/common';
import { TelemetryService, type TickReport } from '../modules/telemetry/telemetry.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `telemetry` (repeatable): one sample of the driver's GPU metrics into the rollups. */
@Injectable()
export class TelemetryProcessor implements QueueProcessor {
  readonly queue = 'telemetry' as const;
  readonly concurrency = 1;

  constructor(private readonly telemetry: TelemetryService) {}

  async process(data: unknown): Promise<TickReport> {
    QUEUES.telemetry.parse(data);
    return this.telemetry.tick();
  }
}
