/**
 * Runs a plan on a worker thread, so that a long replay never blocks the process that asked
 * for it (the API's worker keeps running its scheduling cycles), and so that cancelling it is
 * terminating the thread. The thread reports progress (throttled) and ends with the result or
 * the error.
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { PlannerRunSpec } from '@gantry/contracts';
import { PlannerInputError, describeProblem } from './input-error';
import { runPlan, type PlanResult } from './plan';
import { resolveSpec, type SuppliedInput } from './run-spec';

interface ThreadData {
  spec: PlannerRunSpec;
  supplied: SuppliedInput;
}

type Message = { kind: 'progress'; fraction: number } | { kind: 'done'; result: PlanResult } | { kind: 'error'; message: string };

export interface ThreadRun {
  result: Promise<PlanResult>;
  /** Stops the replay; `result` rejects with 'cancelled'. */
  cancel(reason?: string): Promise<void>;
}

/** Starts a plan on a new thread. `timeoutMs` bounds it: past it the thread is stopped and the run rejects. */
export function runPlanInThread(
  spec: PlannerRunSpec,
  opts: { onProgress?: (fraction: number) => void; timeoutMs?: number; supplied?: SuppliedInput } = {},
): ThreadRun {
  const worker = new Worker(__filename, { workerData: { spec, supplied: opts.supplied ?? {} } satisfies ThreadData });
  let stopReason: string | null = null;
  const result = new Promise<PlanResult>((resolvePromise, reject) => {
    const timer = setTimeout(
      () => {
        stopReason = `the replay did not finish within ${opts.timeoutMs ?? 0} ms`;
        void worker.terminate();
      },
      opts.timeoutMs ?? 30 * 60_000,
    );
    const finish = (f: () => void) => {
      clearTimeout(timer);
      f();
    };
    worker.on('message', (m: Message) => {
      if (m.kind === 'progress') opts.onProgress?.(m.fraction);
      else if (m.kind === 'done') finish(() => resolvePromise(m.result));
      else finish(() => reject(new Error(m.message)));
    });
    worker.on('error', (e) => finish(() => reject(e)));
    worker.on('exit', (code) => finish(() => reject(new Error(stopReason ?? `the replay stopped (thread exit code ${code})`))));
  });
  return {
    result,
    async cancel(reason = 'cancelled') {
      stopReason = reason;
      await worker.terminate();
    },
  };
}

/** Runs in the thread. */
function threadMain(): void {
  const port = parentPort!;
  let last = 0;
  try {
    const data = workerData as ThreadData;
    const input = resolveSpec(data.spec, data.supplied);
    const result = runPlan(input, {
      onPlanProgress: (fraction) => {
        const now = Date.now();
        if (now - last < 200) return;
        last = now;
        port.postMessage({ kind: 'progress', fraction } satisfies Message);
      },
    });
    port.postMessage({ kind: 'done', result } satisfies Message);
  } catch (e) {
    const message = e instanceof PlannerInputError ? e.problems.map(describeProblem).join('; ') : e instanceof Error ? e.message : String(e);
    port.postMessage({ kind: 'error', message } satisfies Message);
  }
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadData> | null)?.spec?.workload) threadMain();
