import type { AppConfig } from '../../config/config';
import { CycleActivity } from '../../common/cycle-activity.store';
import type { IntegrityService } from './integrity.service';
import type { IntegrityStore } from './integrity.store';
import { IntegrityMonitor } from './integrity.monitor';

function monitor() {
  const check = jest.fn(() => Promise.resolve({ violations: [] }));
  const claim = jest.fn(() => Promise.resolve(true));
  const activity = new CycleActivity();
  const m = new IntegrityMonitor(
    { check } as unknown as IntegrityService,
    { claim } as unknown as IntegrityStore,
    { integrityCheckSeconds: 60 } as AppConfig,
    activity,
  );
  return { m, check, claim, activity };
}

/** Holds the worker in scheduling cycles until the returned function is called. */
function cycling(activity: CycleActivity): () => Promise<void> {
  let end!: () => void;
  const done = activity.during(() => new Promise<void>((r) => (end = r)));
  return () => (end(), done);
}

describe('IntegrityMonitor', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('checks at once on a worker that is not running scheduling cycles', async () => {
    const { m, check } = monitor();
    await m.tick();
    expect(check).toHaveBeenCalledTimes(1);
  });

  it('waits while this worker runs scheduling cycles, and checks within a second of their pause', async () => {
    const { m, check, claim, activity } = monitor();
    const stop = cycling(activity);
    const tick = m.tick();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(claim).not.toHaveBeenCalled(); // the other worker may take this turn meanwhile
    expect(check).not.toHaveBeenCalled();
    await stop();
    await jest.advanceTimersByTimeAsync(1_000);
    await tick;
    expect(check).toHaveBeenCalledTimes(1);
  });

  it('checks anyway after half an interval of cycles', async () => {
    const { m, check, activity } = monitor();
    const stop = cycling(activity);
    const tick = m.tick();
    await jest.advanceTimersByTimeAsync(29_000);
    expect(check).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(2_000);
    await tick;
    expect(check).toHaveBeenCalledTimes(1);
    await stop();
  });

  it('gives up its wait at shutdown without checking', async () => {
    const { m, check, activity } = monitor();
    const stop = cycling(activity);
    const tick = m.tick();
    m.beforeApplicationShutdown();
    await jest.advanceTimersByTimeAsync(1_000);
    await tick;
    expect(check).not.toHaveBeenCalled();
    await stop();
  });
});
