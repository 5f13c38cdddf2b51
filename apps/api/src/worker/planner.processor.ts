import { Injectable } from '@nestjs/common';
import { PlannerService } from '../modules/planner/planner.service';
import { QUEUES } from '../queues/queue-names';
import type { QueueProcessor } from './processor';

/** `planner`: one what-if run, replayed on a thread (one at a time per worker: it is CPU-bound). */
@Injectable()
export class PlannerProcessor implements QueueProcessor {
  readonly queue = 'planner' as const;
  readonly concurrency = 1;

  constructor(private readonly planner: PlannerService) {}

  process(data: unknown): Promise<{ status: string }> {
    return this.planner.execute(QUEUES.planner.parse(data).runId);
  }
}
