/**
 * startMany() for any driver: every request's start(), at most `concurrency` in flight, one
 * outcome per request in the order asked; a refused start fails only its own outcome.
 */
import type { StartOutcome, StartRequest } from '../types';
import { mapBounded } from './bounded-map';

export function startEach(requests: readonly StartRequest[], concurrency: number, start: (req: StartRequest) => Promise<void>): Promise<StartOutcome[]> {
  return mapBounded(requests, concurrency, async (req): Promise<StartOutcome> => {
    try {
      await start(req);
      return { jobId: req.jobId, ok: true };
    } catch (err) {
      return { jobId: req.jobId, ok: false, error: err instanceof Error ? err : new Error(String(err)) };
    }
  });
}
