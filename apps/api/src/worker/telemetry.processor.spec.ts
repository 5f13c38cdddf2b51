import type { TelemetryService } from '../modules/telemetry/telemetry.service';
import { CycleActivity } from '../common/cycle-activity.store';
import { dueOf, type QueuedJob } from './queued-job';
import { TelemetryProcessor, TICK_STEP_ASIDE_LIMIT_MS, TICK_STEP_ASIDE_MS } from './telemetry.processor';

class SteppedAside extends Error {}

function setup() {
  const ticks: (Date | undefined)[] = [];
  const asides: number[] = [];
  const telemetry = {
    tick: async (at?: Date) => (ticks.push(at), { at: '', written: true, samples: 0, rollupRows: 0, pruned: 0 }),
  } as unknown as TelemetryService;
  const activity = new CycleActivity();
  const job = (dueMs: number | undefined): QueuedJob => ({
    dueMs,
    stepAside: async (ms) => {
      asides.push(ms);
      throw new SteppedAside();
    },
  });
  /** Runs `fn` while the process runs a cycle. */
  const whileCycling = async (fn: () => Promise<unknown>) => {
    let release!: () => void;
    const cycle = activity.during(() => new Promise<void>((r) => (release = r)));
    try {
      return await fn();
    } finally {
      release();
      await cycle;
    }
  };
  return { p: new TelemetryProcessor(telemetry, activity), job, ticks, asides, whileCycling };
}

describe('TelemetryProcessor', () => {
  it('a tick due while this worker runs scheduling cycles steps aside for another worker; not cycling, it runs', async () => {
    const { p, job, ticks, asides, whileCycling } = setup();
    const due = Date.now() - 100;
    await whileCycling(() => expect(p.process({}, job(due))).rejects.toBeInstanceOf(SteppedAside));
    expect(asides).toEqual([TICK_STEP_ASIDE_MS]);
    expect(ticks).toHaveLength(0);
    await p.process({}, job(due));
    expect(ticks).toEqual([new Date(due)]);
  });

  it('runs where it is, while cycling, once it is late by the step-aside limit (a single worker that cycles without pause still samples)', async () => {
    const { p, job, ticks, asides, whileCycling } = setup();
    const due = Date.now() - TICK_STEP_ASIDE_LIMIT_MS - 1;
    await whileCycling(() => p.process({}, job(due)));
    expect(asides).toHaveLength(0);
    expect(ticks).toEqual([new Date(due)]);
  });

  it('a late tick is taken at the time it was due: it writes its own interval, not the next one', async () => {
    const { p, job, ticks } = setup();
    // due 0.4 s before an interval's end, run 0.5 s later: the interval of its due time
    const boundary = Math.floor(Date.now() / 15_000) * 15_000;
    const due = boundary - 400;
    await p.process({}, job(due));
    expect(ticks).toEqual([new Date(due)]);
  });

  it('a job without a due time (a one-off) is taken now and never steps aside', async () => {
    const { p, job, ticks, asides, whileCycling } = setup();
    await whileCycling(() => p.process({}, job(undefined)));
    expect(asides).toHaveLength(0);
    expect(ticks).toEqual([undefined]);
  });

  it.each([
    { id: 'repeat:telemetry-tick:1733450415000', want: 1733450415000 },
    { id: 'repeat:a:b:42', want: 42 },
    { id: '17', want: undefined },
    { id: undefined, want: undefined },
  ])('dueOf($id)', ({ id, want }) => expect(dueOf(id)).toBe(want));
});
