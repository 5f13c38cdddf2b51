/**
 * startMany() for any driver: every request's start(), at most `concurrency` in flight, one
 * outcome per request in the order asked; a refused start fails only its own outcome.
 */
import type { StartOutcome, StartRequest } from '../types';

export async function startEach(requests: readonly StartRequest[], concurrency: number, start: (req: StartRequest) => Promise<void>): Promise<StartOutcome[]> {
  const outcomes: StartOutcome[] = new Array<StartOutcome>(requests.length);
  let next = 0;
  const lane = async () => {
    while (next < requests.length) {
      const i = next++;
      const req = requests[i]!;
      try {
        await start(req);
        outcomes[i] = { jobId: req.jobId, ok: true };
      } catch (err) {
        outcomes[i] = { jobId: req.jobId, ok: false, error: err instanceof Error ? err : new Error(String(err)) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, requests.length)) }, lane));
  return outcomes;
}
