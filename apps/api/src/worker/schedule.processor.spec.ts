import { MIN_CYCLE_INTERVAL_MS, ScheduleProcessor } from './schedule.processor';
import type { SchedulingService } from '../modules/scheduling/scheduling.service';
import type { QueuesService } from '../queues/queues.service';
import type { MetricsRecorder } from '../modules/metrics/metrics.recorder';
import type { NodeManagerLoop } from '../modules/node-manager/node-manager.loop';
import { CycleActivity } from '../common/cycle-activity.store';

/** A processor whose cycles take `cycleMs`, with `requests` more requests arriving while cycles run. */
function processor(requests: number, cycleMs = 20) {
  const starts: number[] = [];
  const activity = new CycleActivity();
  const cyclingSeen: boolean[] = [];
  let pending = requests;
  const scheduling = {
    cycle: async () => {
      starts.push(performance.now());
      cyclingSeen.push(activity.cycling);
      await new Promise((r) => setTimeout(r, cycleMs));
      return { pending: 0, placed: 0, conflicts: 0, preempted: 0, ms: cycleMs };
    },
  } as unknown as SchedulingService;
  // the first take of each round clears the request that started it; a request "arrives" during each of the first `requests` cycles
  let takes = 0;
  const queues = {
    takeScheduleRequest: async () => {
      takes++;
      if (takes % 2 === 1) return false;
      return pending-- > 0;
    },
  } as unknown as QueuesService;
  const metrics = { recordCycle: async () => undefined } as unknown as MetricsRecorder;
  const nodeManager = { planSoon: () => undefined } as unknown as NodeManagerLoop;
  return { p: new ScheduleProcessor(scheduling, queues, metrics, nodeManager, activity), starts, activity, cyclingSeen };
}

describe('ScheduleProcessor', () => {
  it('marks the process as cycling while its cycles run, and no longer after (background work steps aside meanwhile)', async () => {
    const { p, activity, cyclingSeen } = processor(2);
    expect(activity.cycling).toBe(false);
    await p.process({ reason: 'burst' });
    expect(cyclingSeen).toEqual([true, true, true]);
    expect(activity.cycling).toBe(false);
  });

  it('runs one cycle at once for a request to an idle scheduler', async () => {
    const { p, starts } = processor(0);
    const t0 = performance.now();
    expect(await p.process({ reason: 'job submitted' })).toHaveLength(1);
    expect(starts[0]! - t0).toBeLessThan(100);
  });

  it('under load, begins each cycle at least the minimum interval after the one before, and serves every request', async () => {
    const { p, starts } = processor(2);
    expect(await p.process({ reason: 'burst' })).toHaveLength(3);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(MIN_CYCLE_INTERVAL_MS - 5);
  });
});
